/*
 * impossible.c - the version changes with no correct conversion, each with
 * the reason. The converter refuses a node that would need one of them,
 * quoting the reason. `to` == 0 means "the op does not exist at the older
 * opset" (no expression in older ops).
 */
#include "adapters/adapters.h"

const AdImpossible ad_impossible_list[] = {
    {"", "Erf", 9, 0, "Erf has no exact expression in ops older than opset 9"},
    {"", "NonMaxSuppression", 10, 0,
     "NonMaxSuppression has no expression in ops older than opset 10"},
    {"", "Shrink", 9, 0,
     "Shrink maps NaN to 0, which needs an elementwise select (Where, opset 9); "
     "masks built from Mul or Relu turn NaN and -inf times 0 into NaN"},
    {"", "RoiAlign", 10, 0, "adaptive per-ROI bilinear sampling has no older op"},
    {"", "SequenceAt", 11, 0, "there is no sequence type before opset 11"},
    {"", "SequenceConstruct", 11, 0, "there is no sequence type before opset 11"},
    {"", "SequenceEmpty", 11, 0, "there is no sequence type before opset 11"},
    {"", "SequenceErase", 11, 0, "there is no sequence type before opset 11"},
    {"", "SequenceInsert", 11, 0, "there is no sequence type before opset 11"},
    {"", "SequenceLength", 11, 0, "there is no sequence type before opset 11"},
    {"", "SplitToSequence", 11, 0, "there is no sequence type before opset 11"},
    {"", "ConcatFromSequence", 11, 0, "there is no sequence type before opset 11"},
    {"", "Optional", 15, 0, "there is no optional type before opset 15"},
    {"", "OptionalGetElement", 15, 0, "there is no optional type before opset 15"},
    {"", "OptionalHasElement", 15, 0, "there is no optional type before opset 15"},
    {"", "Acos", 7, 0, "there is no trigonometric or periodic op before opset 7"},
    {"", "Asin", 7, 0, "there is no trigonometric or periodic op before opset 7"},
    {"", "Atan", 7, 0, "there is no trigonometric or periodic op before opset 7"},
    {"", "Cos", 7, 0, "there is no trigonometric or periodic op before opset 7"},
    {"", "Sin", 7, 0, "there is no trigonometric or periodic op before opset 7"},
    {"", "Tan", 7, 0, "there is no trigonometric or periodic op before opset 7"},
    {"", "Sinh", 9, 0, "the Exp/Log formulas lose accuracy through cancellation for small |x|"},
    {"", "Asinh", 9, 0, "the Exp/Log formulas lose accuracy through cancellation for small |x|"},
    {"", "Atanh", 9, 0, "the Exp/Log formulas lose accuracy through cancellation for small |x|"},
    {"", "Cosh", 9, 0, "the Exp/Sqrt formulas overflow long before the result does"},
    {"", "Acosh", 9, 0, "the Exp/Sqrt formulas overflow long before the result does"},
    {"", "BitwiseAnd", 18, 0, "no integer bitwise op before opset 18 (And/Or/Xor take bool only)"},
    {"", "BitwiseOr", 18, 0, "no integer bitwise op before opset 18 (And/Or/Xor take bool only)"},
    {"", "BitwiseXor", 18, 0, "no integer bitwise op before opset 18 (And/Or/Xor take bool only)"},
    {"", "Det", 11, 0, "no older form: it needs a pivoting LU decomposition"},
    {"", "MelWeightMatrix", 17, 0,
     "the spec leaves the bin construction to implementations; folding it would fix one runtime's choice"},
    {"", "Multinomial", 7, 0, "no older op samples a categorical distribution"},
    {"", "StringConcat", 20, 0, "no older op builds strings"},
    {"", "StringSplit", 20, 0, "no older op splits strings"},
    {"", "RegexFullMatch", 20, 0, "no older op matches regular expressions"},
    {"", "StringNormalizer", 10, 0, "no older string op"},
    {"", "TfIdfVectorizer", 9, 0, "no older op counts n-grams"},
    {"", "ImageDecoder", 20, 0, "no older op decodes images"},
    {"", "MaxUnpool", 9, 0,
     "opset 8 has no scatter and no Where; a one-hot product turns inf/NaN inputs into NaN"},
    {"", "DeformConv", 19, 0,
     "it samples at offsets known only at run time; no older op interpolates at arbitrary positions exactly"},
    {"", "Unique", 11, 0, "Unique's outputs have data-dependent shapes; no op before opset 11 computes them"},
};
const size_t ad_impossible_n = sizeof ad_impossible_list / sizeof ad_impossible_list[0];

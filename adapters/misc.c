/*
 * misc.c - adapters of NonMaxSuppression, TfIdfVectorizer and
 * ImageDecoder. The random ops are in random.c, the signal ops in
 * signal.c.
 *
 * TfIdfVectorizer and ImageDecoder have no older form at all (see the
 * report's impossible entries).
 */
#include "adapters/adapters.h"

static const AdEntry ad_misc[] = {
    AD_BOTH("NonMaxSuppression", 10, 11),
};

const AdFamily ad_family_misc = {"misc", ad_misc, sizeof ad_misc / sizeof ad_misc[0]};

/*
 * targets.h - `info --targets`: every opset a model converts to (prefix tg_).
 *
 * Each target is a dry run of `convert MODEL --opset T` (`--opset-ml T`
 * for ai.onnx.ml): job_convert with every stage but save. So a target
 * listed as reachable converts, and a refused one gives the stage, reason
 * and message convert gives; whatever convert comes to check or refuse,
 * this list follows without a change here. The command line and the C
 * library (oc_targets_report) print the same report.
 */
#ifndef OC_TARGETS_H
#define OC_TARGETS_H

#include "driver/job.h"
#include "base/json.h"

/* The domains a target is listed for: the model's domain key, its name
 * in the report, and what the text calls its targets. */
#define TG_N 2
typedef struct TgDomain {
    const char *domain, *name, *noun;
} TgDomain;
extern const TgDomain tg_domains[TG_N];

/* Runs convert's stages for target t of domain d on a fresh load of in,
 * writing nothing. true when it would convert; r is filled either way
 * (job_report_free). */
bool tg_try(const JobInput *in, size_t d, int64_t t, JobReport *r);

/* The report of docs/json.md ("info --targets") for the model in, whose
 * own opsets (0: not imported) and IR version are given. */
void tg_json(Js *j, const JobInput *in, const int64_t own[TG_N], int64_t ir);

#endif

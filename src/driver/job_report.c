/*
 * job_report.c - how a job ends (prefix job_; declared in job.h):
 * the status, stage, reason and one-line message every stage's failure
 * writes into the report. Below job.c and job_coreml.c, which both end
 * jobs.
 */
#include "driver/job.h"

#include <string.h>

/* Ends the job: status, stage, reason (its JSON name: a DgReason's or a
 * checker rule's, static storage) and the one-line message. */
int job_end_as(JobReport *r, JobStatus st, DgStage stage, const char *reason,
               const char *msg)
{
    r->status = st;
    r->stage = dg_stage_name(stage);
    r->reason = reason;
    size_t n = strlen(msg);   /* a longer message is cut */
    if (n >= sizeof r->msg)
        n = sizeof r->msg - 1;
    memcpy(r->msg, msg, n);
    r->msg[n] = '\0';
    return -1;
}

int job_end(JobReport *r, JobStatus st, DgStage stage, DgReason reason, const char *msg)
{
    return job_end_as(r, st, stage, dg_reason_name(reason), msg);
}

/*
 * diag.c - the reason and stage names, the node label and the one-line
 * text of a diagnostic (diag.h).
 */
#include "ir/diag.h"

#include <stdio.h>
#include <string.h>

static const char *const dg_reason_names[DG_N_REASONS] = {
    [DG_NONE] = "",
#define DG_NAME(e, name, what) [DG_##e] = name,
    DG_REASONS(DG_NAME)
#undef DG_NAME
};

static const char *const dg_stage_names[DG_N_STAGES] = {
    [DG_STAGE_NONE] = "",
#define DG_SNAME(e, name) [DG_STAGE_##e] = name,
    DG_STAGES(DG_SNAME)
#undef DG_SNAME
};

const char *dg_reason_name(DgReason r)
{
    return (unsigned)r < DG_N_REASONS ? dg_reason_names[r] : "";
}

DgReason dg_reason_parse(const char *name)
{
    if (!name || !*name)
        return DG_NONE;
    for (int r = 1; r < DG_N_REASONS; r++)
        if (!strcmp(dg_reason_names[r], name))
            return (DgReason)r;
    return DG_NONE;
}

const char *dg_stage_name(DgStage s)
{
    return (unsigned)s < DG_N_STAGES ? dg_stage_names[s] : "";
}

DgStage dg_stage_parse(const char *name)
{
    if (!name || !*name)
        return DG_STAGE_NONE;
    for (int s = 1; s < DG_N_STAGES; s++)
        if (!strcmp(dg_stage_names[s], name))
            return (DgStage)s;
    return DG_STAGE_NONE;
}

DgDiag dg_none(void)
{
    return (DgDiag){.index = -1};
}

const char *dg_diag_reason(const DgDiag *d)
{
    if (d->reason == DG_RULE && d->rule && *d->rule)
        return d->rule;
    return dg_reason_name(d->reason);
}

/* "DOMAIN:" for a domain other than the default one (written "" or
 * "ai.onnx"), else "". */
static const char *dg_domain_prefix(const char *domain, char *buf, size_t cap)
{
    if (!ir_domain_norm(domain)[0])
        return "";
    snprintf(buf, cap, "%s:", domain);
    return buf;
}

char *dg_label(const DgDiag *d, char *buf, size_t cap)
{
    char dom[128], ver[24] = "";
    const char *op = d->op ? d->op : "";
    if (d->version > 0)
        snprintf(ver, sizeof ver, "-%d", d->version);
    const char *pre = dg_domain_prefix(d->domain, dom, sizeof dom);
    if (cap == 0)
        return buf;
    if ((!d->node || !*d->node) && d->index >= 0)
        snprintf(buf, cap, "node #%lld (%s%s%s)", d->index, pre, op, ver);
    else
        snprintf(buf, cap, "node '%s' (%s%s%s)", d->node ? d->node : "", pre, op, ver);
    return buf;
}

/* Whether d names a node (an op is what every label needs). */
static int dg_has_node(const DgDiag *d)
{
    return d->op && *d->op;
}

int dg_where(const DgDiag *d, char *buf, size_t cap)
{
    if (!dg_has_node(d))
        return snprintf(buf, cap, "%s", "");
    char label[512];
    dg_label(d, label, sizeof label);
    if (d->step_from > 0)
        return snprintf(buf, cap, "%s: opset %lld -> %lld", label,
                        (long long)d->step_from, (long long)d->step_to);
    return snprintf(buf, cap, "%s", label);
}

int dg_format(const DgDiag *d, char *buf, size_t cap)
{
    const char *msg = d->msg ? d->msg : "";
    if (!dg_has_node(d))
        return snprintf(buf, cap, "%s", msg);
    char where[600];
    dg_where(d, where, sizeof where);
    return snprintf(buf, cap, "%s: %s", where, msg);
}

void dg_set_node(DgDiag *d, const IrNode *n, const char *domain, int version)
{
    d->node = n->name ? n->name : "";
    d->op = n->op_type ? n->op_type : "";
    d->domain = domain ? domain : n->domain;
    d->version = version;
    d->index = -1;
    if (d->node[0] || n->dead)
        return;
    long long i = 0;
    for (const IrNode *k = n->prev; k; k = k->prev)
        i++;
    d->index = i;
}

char *dg_node_label(const IrNode *n, int version, char *buf, size_t cap)
{
    DgDiag d = dg_none();
    dg_set_node(&d, n, NULL, version);
    return dg_label(&d, buf, cap);
}

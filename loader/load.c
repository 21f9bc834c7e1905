/* SPDX-License-Identifier: MIT */
/*
 * ulp_load: check the request, check the program and its interpreter completely, and only then
 * map program, interpreter and stack and write the start-up stack. Whatever fails after the first
 * mapping puts the touched ranges back to PROT_NONE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { R_IMAGE, R_INTERP, R_STACK, R_COUNT };

struct range {
	uintptr_t lo, hi;
	const char *name;
};

static void ranges_of(const struct ulp_load_req *req, struct range r[R_COUNT])
{
	r[R_IMAGE] = (struct range){req->image_base, req->image_limit, "image"};
	r[R_INTERP] = (struct range){req->interp_base, req->interp_limit, "interpreter"};
	r[R_STACK] = (struct range){req->stack_lo, req->stack_hi, "stack"};
}

static int check_ranges(const struct range r[R_COUNT], const struct ulp_ld_err *e)
{
	uintptr_t mask = ulp_ld_pagesize() - 1;
	int i, j;

	for (i = 0; i < R_COUNT; i++)
		if ((r[i].lo | r[i].hi) & mask || r[i].hi < r[i].lo)
			return ulp_ld_fail(e, -EINVAL,
					   "bad request: %s range %#lx-%#lx is not a "
					   "page-aligned range",
					   r[i].name, (unsigned long)r[i].lo,
					   (unsigned long)r[i].hi);
	for (i = 0; i < R_COUNT; i++)
		for (j = i + 1; j < R_COUNT; j++)
			if (r[i].lo < r[j].hi && r[j].lo < r[i].hi)
				return ulp_ld_fail(e, -EINVAL,
						   "bad request: %s and %s ranges overlap",
						   r[i].name, r[j].name);
	if (r[R_STACK].hi - r[R_STACK].lo < 2 * ulp_ld_pagesize())
		return ulp_ld_fail(e, -EINVAL,
				   "bad request: the stack range needs a guard page "
				   "and at least one page");
	return 0;
}

static int check_req(const struct ulp_load_req *req, const struct range r[R_COUNT],
		     const struct ulp_ld_err *e)
{
	size_t i;

	if (!req->path || !req->path[0])
		return ulp_ld_fail(e, -ENOENT, "bad request: empty program path");
	for (i = 0; i < req->n_extra_auxv; i++)
		if (req->extra_auxv[i][0] == AT_NULL)
			return ulp_ld_fail(e, -EINVAL,
					   "bad request: extra auxv pair %zu is AT_NULL", i);
	return check_ranges(r, e);
}

static int check_fit(const struct ulp_elf *f, const struct range *r, const char *needs,
		     const struct ulp_ld_err *e)
{
	if (f->span > r->hi - r->lo)
		return ulp_ld_fail(e, -ENOMEM, "%s %llu bytes, partition %s area has %lu", needs,
				   (unsigned long long)f->span, r->name,
				   (unsigned long)(r->hi - r->lo));
	return 0;
}

/* Open and check the program, then its interpreter (if any), before anything is mapped. */
static int open_all(const struct ulp_load_req *req, const struct range r[R_COUNT],
		    struct ulp_elf *prog, struct ulp_elf *interp, struct ulp_ld_err *e)
{
	int rc = ulp_elf_open(prog, req->path, e);

	if (!rc)
		rc = check_fit(prog, &r[R_IMAGE], "program needs", e);
	if (!rc && !prog->phdr_vaddr)
		rc = ulp_ld_fail(e, -ENOEXEC,
				 "corrupt ELF: the program headers are not inside a "
				 "loaded segment (no AT_PHDR)");
	if (rc || !prog->interp)
		return rc;
	e->interp = prog->interp;
	rc = ulp_elf_open(interp, prog->interp, e);
	if (rc)
		return rc;
	if (interp->interp) /* ld.so must start on its own */
		return ulp_ld_fail(e, -ENOEXEC, "asks for an interpreter (%s)", interp->interp);
	rc = check_fit(interp, &r[R_INTERP], "needs", e);
	if (!rc)
		e->interp = NULL;
	return rc;
}

static void fill_image(const struct ulp_load_req *req, const struct ulp_elf *prog,
		       const struct ulp_elf *interp, struct ulp_image *out)
{
	memset(out, 0, sizeof(*out));
	out->load_bias = req->image_base;
	out->prog_entry = req->image_base + prog->eh.e_entry;
	out->phdr = req->image_base + prog->phdr_vaddr;
	out->phnum = prog->phnum;
	out->brk_start = req->image_base + prog->span;
	out->is_static = !prog->interp;
	out->entry = out->prog_entry;
	if (prog->interp) {
		out->interp_bias = req->interp_base;
		out->interp_end = req->interp_base + interp->span;
		out->entry = req->interp_base + interp->eh.e_entry;
	}
}

/* Map and build; on failure resets every range it began to touch. */
static int map_all(const struct ulp_load_req *req, const struct range r[R_COUNT],
		   const struct ulp_elf *prog, const struct ulp_elf *interp, struct ulp_image *out,
		   struct ulp_ld_err *e)
{
	struct ulp_stack_in in;
	int touched = 1 << R_IMAGE, rc, i;

	fill_image(req, prog, interp, out);
	rc = ulp_map_segments(prog, req->image_base, e);
	if (!rc && prog->interp) {
		touched |= 1 << R_INTERP;
		e->interp = prog->interp;
		rc = ulp_map_segments(interp, req->interp_base, e);
		e->interp = NULL;
	}
	if (!rc) {
		touched |= 1 << R_STACK;
		rc = ulp_map_stack(req->stack_lo, req->stack_hi, e);
	}
	if (!rc) {
		in = (struct ulp_stack_in){req, out->phdr, out->phnum, out->prog_entry,
					   out->interp_bias};
		rc = ulp_stack_build(&in, &out->sp, &out->random, e);
	}
	for (i = 0; rc && i < R_COUNT; i++)
		if (touched & (1 << i))
			ulp_map_reset(r[i].lo, r[i].hi);
	return rc;
}

/* A program checked and opened, nothing mapped yet (ulp_load_prepare). */
struct ulp_load_prep {
	struct ulp_load_req req;
	struct ulp_elf prog, interp;
};

static void prep_free(struct ulp_load_prep *p)
{
	ulp_elf_close(&p->interp);
	ulp_elf_close(&p->prog);
	free(p);
}

int ulp_load_prepare(const struct ulp_load_req *req, struct ulp_load_prep **out, char *err,
		     size_t errlen)
{
	struct ulp_ld_err e = {err, errlen, req->path ? req->path : "(null)", NULL};
	struct ulp_load_prep *p;
	struct range r[R_COUNT];
	int rc;

	if (err && errlen)
		err[0] = '\0';
	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ulp_ld_fail(&e, -ENOMEM, "out of memory");
	p->req = *req;
	p->interp.fd = p->prog.fd = -1;
	ranges_of(req, r);
	rc = check_req(req, r, &e);
	if (!rc)
		rc = open_all(req, r, &p->prog, &p->interp, &e);
	/* the stack's room for the strings: all that could fail later but a mapping */
	if (!rc)
		rc = ulp_stack_check(req, &e);
	if (rc) {
		prep_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int ulp_load_commit(struct ulp_load_prep *p, struct ulp_image *out, char *err, size_t errlen)
{
	const struct ulp_load_req *req = &p->req;
	struct ulp_ld_err e = {err, errlen, req->path, NULL};
	struct range r[R_COUNT];
	int rc;

	if (err && errlen)
		err[0] = '\0';
	memset(out, 0, sizeof(*out));
	ranges_of(req, r);
	rc = map_all(req, r, &p->prog, &p->interp, out, &e);
	prep_free(p);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

void ulp_load_abort(struct ulp_load_prep *p)
{
	if (p)
		prep_free(p);
}

int ulp_load(const struct ulp_load_req *req, struct ulp_image *out, char *err, size_t errlen)
{
	struct ulp_load_prep *p;
	int rc = ulp_load_prepare(req, &p, err, errlen);

	if (rc) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	return ulp_load_commit(p, out, err, errlen);
}

void ulp_unload(const struct ulp_load_req *req)
{
	struct range r[R_COUNT];
	int i;

	ranges_of(req, r);
	for (i = 0; i < R_COUNT; i++)
		ulp_map_reset(r[i].lo, r[i].hi);
}

# SPDX-License-Identifier: MIT
# gdb Python, sourced by tests/hangdump.sh into a stopped ulpspawn/ulpexec process: what its
# runtime knows that the kernel cannot show. For each ULP of the PVAS region: its threads, each
# with its scheduler state, switches, the trapped call it is in, and, when parked in a futex wait,
# the word's address, the value it waits on and the value now (a wait whose word already changed
# is a lost wake); then the workers of each PVAS task: the thread each runs and what waits in
# its inbox, deque and yield queue. A ready thread that is in none of them was lost by the
# scheduler; two threads that keep switching while their rank waits are livelocked (the hang of
# 28 Nov: in two ranks of a pair, one thread yielding inside MPICH's lock, the other waiting for
# it). Lines start with "#ulp ".
# Reads memory only; anything it cannot read ends it with one line saying why.
import gdb

STATES = {0: "ready", 1: "running", 2: "blocked", 3: "exited"}
MAX_LINES = 60
out = []


def say(s):
    out.append("#ulp " + s)


def u32(addr):
    try:
        return int(gdb.parse_and_eval("*(unsigned int *)%d" % addr))
    except gdb.error:
        return None


def thread_line(pvid, u, names, rts):
    t = u["t"]
    rts.append(t["worker"])
    st = int(t["state"])
    sysno = int(t["in_syscall"])
    line = "  pvid %d tid %d %s switches %d" % (
        pvid, int(u["tid"]), STATES.get(st, str(st)), int(t["switches"]))
    if sysno:
        line += " in syscall %d" % (sysno - 1)
    if int(u["fqueued"]):
        key = int(u["fkey"])
        line += " futex %#x waits for %d, holds %s" % (key, int(u["fval"]), u32(key))
    if int(t["probe"]):
        line += " probed"
    if int(u["ended"]):
        line += " ended"
    names[int(t)] = "%d:%d" % (pvid, int(u["tid"]))
    say(line)


def ulps(names, rts):
    r = gdb.parse_and_eval("'libulp/kernel/signal.c'::region")
    if int(r) == 0:
        say("no PVAS region in this process")
        return
    base, size = int(r["base"]), int(r["part_size"])
    cbt = gdb.lookup_type("struct ulp_cb").pointer()
    for pvid in range(int(r["nparts"])):
        if int(r["procs"][pvid]["state"]) == 0:
            continue
        cb = gdb.Value(base + pvid * size).cast(cbt)
        tg = cb["tg"]
        if int(tg) == 0:
            t = cb["task"]
            rts.append(t["worker"])
            names[int(t.address)] = "%d" % pvid
            say("  pvid %d (one thread) %s switches %d" % (
                pvid, STATES.get(int(t["state"]), "?"), int(t["switches"])))
            continue
        say("pvid %d: %d threads live%s" % (
            pvid, int(tg["nlive"]), ", dying" if int(tg["dying"]) else ""))
        thread_line(pvid, tg["leader"], names, rts)
        v = tg["threads"]
        while int(v):
            thread_line(pvid, v.dereference(), names, rts)
            v = v["gnext"]


def chain(t, names):
    s = []
    while int(t) and len(s) < 40:
        s.append(names.get(int(t), "%#x" % int(t)))
        t = t["next"]
    return " ".join(s)


def runtimes(rts):
    """The scheduler instances (one per PVAS task) of the workers that ran the ULPs, each once:
    a worker its own instance lists (the tasks of a job share its address space)."""
    seen = []
    for w in rts:
        if not int(w):
            continue
        try:
            rt = w["rt"]
            if int(rt) not in [int(r) for r in seen] and any(
                    int(rt["workers"][i]) == int(w) for i in range(int(rt["nworkers"]))):
                seen.append(rt)
        except gdb.error:
            continue
    return seen


def workers(names, rts):
    found = runtimes(rts)
    if not found:
        say("no worker ran a ULP")
    for k, rt in enumerate(found):
        for i in range(int(rt["nworkers"])):
            w = rt["workers"][i]
            dq = w["dq"]
            buf = dq["buf"]
            mask = int(buf["mask"])
            lo, hi = int(dq["top"]), int(dq["bottom"])
            deque = " ".join(names.get(int(buf["slot"][j & mask]), "?")
                             for j in range(lo, min(hi, lo + 40)))
            say("task %d worker %d runs %s; inbox: %s; deque: %s; yield queue: %s" % (
                k, i, names.get(int(w["cur"]), "%#x" % int(w["cur"])),
                chain(w["inbox"], names), deque, chain(w["yq_head"], names)))


def main():
    names = {}
    try:
        rts = []
        ulps(names, rts)
        workers(names, rts)
    except (gdb.error, RuntimeError) as e:
        say("stopped: %s" % e)
    # the workers' lines first: the threads' may be many
    lines = [x for x in out if x.startswith("#ulp task")]
    rest = [x for x in out if not x.startswith("#ulp task")]
    lines += rest[:max(MAX_LINES - len(lines), 0)]
    if len(out) > len(lines):
        lines.append("#ulp (%d more lines)" % (len(out) - len(lines)))
    for line in lines:
        print(line)


main()

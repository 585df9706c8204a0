"""The C side of the registry: headers generated from it, so that the
generic probes, the collector and the calibrator name no engine.

    python3 -m engines.bpf_units [PROBES_DIR]     (`make golden`)

probes/engines.gen.h (the records' side, userspace too): each engine's
`enum ws_engine` member, numbered in the registry's order; its record
interface `probes/<name>.h`; its phase table `WS_<NAME>_PHASE_COMPS` where
it has one; its per-thread state `struct ws_<name>_state` where it has one.

probes/hooks.gen.bpf.h (the BPF program's, before the generic code that
calls them): the dispatchers' declarations, each with what its hook is.

probes/engines.gen.bpf.h (the BPF program's, after the generic code): each
engine's BPF unit `probes/<name>.bpf.h` where it has one, and a
dispatcher per hook: the hooks a unit defines are
found in its file by their fixed names, `<name>_<hook>`; an engine that
defines none of a hook gets the hook's default (no syscall rule: none,
never another engine's).  Then each engine's enums, kept in BTF for
Python (runfolder/records.py).

probes/calibrate.gen.h (walscope-calibrate's): each engine's play
`probes/<name>.cal.h` where it has one, and ws_calibrate_engines(), which
calls each `<name>_calibrate()` in the registry's order.

probes/file_kinds.gen.h (file_kind.h's, BPF and user space): each
engine's files by name `probes/<name>.files.h` where it has one, and
ws_fk_engines(), which asks each `<name>_file_kind()` in turn.

Stdlib only: the registry's units import nothing of walscope's.
"""
from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import engines

ROOT = Path(__file__).resolve().parent.parent
PROBES = ROOT / "probes"
HEADER = "engines.gen.h"
HOOKS_HEADER = "hooks.gen.bpf.h"
BPF_HEADER = "engines.gen.bpf.h"
CAL_HEADER = "calibrate.gen.h"
FILES_HEADER = "file_kinds.gen.h"


@dataclass(frozen=True)
class Hook:
    name: str
    returns: str              # C return type
    params: str               # C parameters
    args: str                 # the arguments the dispatcher passes on
    key: str | None           # the engine id it dispatches on; None: every engine's
    default: str | None       # what an engine without it gives (None: void)
    what: str


HOOKS: tuple[Hook, ...] = (
    Hook("enter", "int", "struct pt_regs *ctx, struct thread_state *t, __u32 tgid, "
         "__u32 tid, __u64 now, __u64 cookie", "ctx, t, tgid, tid, now, cookie",
         "(__u8)(cookie >> 8)", "-1",
         "a probe's entry: >= 0 handled (the program returns it), < 0 the generic "
         "phase stack pushes the cookie's phase inside an open row"),
    Hook("exit", "int", "struct pt_regs *ctx, struct thread_state *t, __u64 now, "
         "__u64 cookie", "ctx, t, now, cookie", "(__u8)(cookie >> 8)", "-1",
         "a probe's return: as enter; < 0 pops the phase inside an open row"),
    Hook("sys_comp", "__u8", "struct thread_state *t, int cls, long nr", "t, cls, nr",
         "t->rec.engine", "0xff",
         "a syscall of class cls (enum io_class) begins inside a row: its component "
         "(0xff: the phase stack's), t->sys_busy set for a WAL write (2) or sync (1)"),
    Hook("sys_exit", "void", "struct thread_state *t, __u16 kind, long ret", "t, kind, ret",
         "t->rec.engine", None,
         "that syscall returns (kind: its file's, known now for an open or unlink)"),
    Hook("sys_ends_row", "int", "struct thread_state *t, __u16 kind, long ret",
         "t, kind, ret", "t->rec.engine", "-1",
         "that syscall, accounted, ends the row (>= 0: with these flags): an engine "
         "whose rows are its log's syscalls"),
    Hook("sys_outside", "void", "struct thread_state *t, int cls, long nr, __u32 tgid, "
         "__u32 tid, __u64 now", "t, cls, nr, tgid, tid, now", None, None,
         "a traced syscall begins outside any row: an engine whose rows are its log's "
         "syscalls may open one (begin_write), the syscall then its first"),
    Hook("queue_wait", "bool", "struct thread_state *t, long nr, struct pt_regs *regs",
         "t, nr, regs", "t->rec.engine", "false",
         "an untraced syscall inside a row is its wait for another row (its queue)"),
    Hook("queue_comp", "__u8", "void", "", "engine", "0xff",
         "the component in which a row waits for another row's WAL I/O (0xff: none)"),
    Hook("is_kept", "bool", "const struct ws_write_rec *r", "r", "r->engine", "true",
         "a finished row is a write (else it is dropped: a read)"),
    Hook("busy_key", "void", "struct thread_state *t, struct busy_key *k", "t, k",
         "t->rec.engine", None,
         "the key of the busy clocks a row's queue is measured against (preset: its "
         "process, no database)"),
    Hook("clear_row", "void", "struct thread_state *t", "t", None, None,
         "the thread is in no row from now: its row's state goes"),
)
# the dispatchers' own parameters, where the hook's do not name the key
DISPATCH_PARAMS = {"queue_comp": "__u16 engine"}


@dataclass(frozen=True)
class Unit:
    name: str                 # the engine's name: its files and its hooks' prefix
    ws_engine: str            # its enum ws_engine member
    enums: tuple[str, ...]    # its enums, kept in BTF
    phase_comps: bool         # its header defines WS_<NAME>_PHASE_COMPS
    state: bool               # ... and struct ws_<name>_state
    bpf: bool                 # it has probes/<name>.bpf.h
    hooks: tuple[str, ...]    # the hooks that file defines
    cal: bool = False         # probes/<name>.cal.h defines <name>_calibrate()
    files: bool = False       # probes/<name>.files.h defines <name>_file_kind()


def defines(text: str, name: str, hook: str) -> bool:
    """Does a unit's BPF file define <name>_<hook>()? (a function
    definition at the start of a line: static inline or a global one)."""
    pat = rf"^(?:static\s+__always_inline|__noinline|static)\b[^;(]*\b{name}_{hook}\s*\("
    return bool(re.search(pat, text, re.M))


def units(probes: Path = PROBES) -> list[Unit]:
    out = []
    for e in engines.ENGINES:
        h = probes / f"{e.name}.h"
        if not h.exists():
            raise SystemExit(f"engines: {e.name} has no record interface {h}")
        head = h.read_text()
        bpf = probes / f"{e.name}.bpf.h"
        text = bpf.read_text() if bpf.exists() else ""
        cal = probes / f"{e.name}.cal.h"
        files = probes / f"{e.name}.files.h"
        enums = tuple(dict.fromkeys(
            n for n in (e.comp_enum, e.phase_enum)
            if n and re.search(rf"^enum\s+{n}\s*{{", head, re.M)))
        out.append(Unit(
            name=e.name, ws_engine=e.ws_engine, enums=enums,
            phase_comps=f"#define WS_{e.name.upper()}_PHASE_COMPS" in head,
            state=bool(re.search(rf"^struct\s+ws_{e.name}_state\s*{{", head, re.M)),
            bpf=bool(text),
            hooks=tuple(k.name for k in HOOKS if text and defines(text, e.name, k.name)),
            cal=cal.exists() and defines(cal.read_text(), e.name, "calibrate"),
            files=files.exists() and defines(files.read_text(), e.name, "file_kind")))
    return out


BANNER = """/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * {file} - generated from the engine registry (engines/) by
 * `make golden` (engines/bpf_units.py): do not edit.
{what} */
"""


def header(us: list[Unit]) -> str:
    guard = "__WS_ENGINES_GEN_H"
    lines = [BANNER.format(file=HEADER, what=(
        " * Each engine's id (enum ws_engine, in the registry's order), its record\n"
        " * interface (probes/<name>.h), its phase table and its thread state.\n")),
        f"#ifndef {guard}", f"#define {guard}", "", "enum ws_engine {"]
    lines += [f"\t{u.ws_engine} = {i},"for i, u in enumerate(us, 1)]
    lines += ["};", ""]
    lines += [f'#include "{u.name}.h"' for u in us]
    lines += ["", "/* each engine's phases -> their components (phase_comp()) */",
              "#define WS_PHASE_COMPS(X)\t\\"]
    tables = [f"\tWS_{u.name.upper()}_PHASE_COMPS(X)" for u in us if u.phase_comps]
    lines += [t + "\t\\" for t in tables[:-1]] + tables[-1:] if tables else ["\t/* none */"]
    lines += ["", "/* each engine's per-thread state (struct thread_state's eng) */",
              "struct ws_engine_state {"]
    states = [f"\tstruct ws_{u.name}_state {u.name};" for u in us if u.state]
    lines += states or ["\t__u64 __none;"]
    lines += ["};", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def signature(k: Hook) -> str:
    params = DISPATCH_PARAMS.get(k.name, k.params)
    return f"static __always_inline {k.returns} engine_{k.name}({params})"


def hooks_header() -> str:
    guard = "__WS_HOOKS_GEN_BPF_H"
    lines = [BANNER.format(file=HOOKS_HEADER, what=(
        " * The hooks an engine's BPF unit (probes/<name>.bpf.h) may define, as\n"
        " * <name>_<hook> with the parameters below, and the dispatchers the\n"
        " * generic code calls (defined in engines.gen.bpf.h, after the units).\n"
        " * A hook an engine does not define gives the default named.\n")),
        f"#ifndef {guard}", f"#define {guard}", ""]
    for k in HOOKS:
        d = "nothing" if k.default is None else k.default
        scope = "every engine's, in turn" if k.key is None else f"by {k.key}"
        text = textwrap.wrap(f"{k.name}: {k.what}.", 72)
        lines += [f"/* {text[0]}", *(f" * {t}" for t in text[1:]),
                  *(f" *   {t}" for t in textwrap.wrap(
                      f"<name>_{k.name}({k.params});", 70, subsequent_indent="\t")),
                  f" * dispatched {scope}; default {d} */", signature(k) + ";", ""]
    lines += [f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def dispatcher(k: Hook, us: list[Unit]) -> list[str]:
    sig = signature(k)
    have = [u for u in us if k.name in u.hooks]
    body: list[str]
    if k.key is None:   # every engine's, in turn
        body = [f"\t{u.name}_{k.name}({k.args});" for u in have]
    else:
        body = [f"\tswitch ({k.key}) {{"]
        for u in have:
            call = f"{u.name}_{k.name}({k.args})"
            body += [f"\tcase {u.ws_engine}:",
                     f"\t\treturn {call};" if k.default is not None else f"\t\t{call};\n\t\tbreak;"]
        body += ["\t}"]
        if k.default is not None:
            body += [f"\treturn {k.default};"]
        if not have:
            body = [f"\treturn {k.default};"] if k.default is not None else []
    return [sig, "{", *body, "}", ""]


def bpf_header(us: list[Unit]) -> str:
    guard = "__WS_ENGINES_GEN_BPF_H"
    lines = [BANNER.format(file=BPF_HEADER, what=(
        " * Each engine's BPF unit, the dispatch to the hooks it defines\n"
        " * (hooks.gen.bpf.h), and its enums kept in BTF.\n")),
        f"#ifndef {guard}", f"#define {guard}", ""]
    lines += [f'#include "{u.name}.bpf.h"' for u in us if u.bpf]
    lines += [""]
    for k in HOOKS:
        lines += dispatcher(k, us)
    lines += ["/* every engine's enums, kept in BTF: Python names its components and",
              " * phases from them */"]
    lines += [f"enum {n} __{n} __attribute__((unused));" for u in us for n in u.enums]
    lines += ["", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def guarded(file: str, what: str, body: list[str]) -> str:
    """A generated header: the banner saying what it holds, body inside its
    include guard (named after the file)."""
    guard = "__WS_" + file.replace(".", "_").upper()
    return "\n".join([BANNER.format(file=file, what=what), f"#ifndef {guard}",
                      f"#define {guard}", "", *body, "", f"#endif /* {guard} */", ""])


def cal_header(us: list[Unit]) -> str:
    have = [u for u in us if u.cal]
    return guarded(CAL_HEADER, (
        " * Each engine's play in walscope-calibrate (probes/<name>.cal.h, where\n"
        " * it has one: static void <name>_calibrate(struct ws_cal *c), which\n"
        " * measures its probes' costs and gives them with cal_field()), and\n"
        " * ws_calibrate_engines(), which plays them in the registry's order.\n"
        " * Included by collectors/walscope_calibrate.c after its helpers.\n"), [
        *(f'#include "{u.name}.cal.h"' for u in have), "",
        "static void ws_calibrate_engines(struct ws_cal *c)", "{",
        *(f"\t{u.name}_calibrate(c);" for u in have), "}"])


def files_header(us: list[Unit]) -> str:
    have = [u for u in us if u.files]
    asks = [line for u in have for line in (f"\tkind = {u.name}_file_kind(s);",
                                            "\tif (kind >= 0)", "\t\treturn kind;")]
    return guarded(FILES_HEADER, (
        " * Each engine's files by their names (probes/<name>.files.h, where it\n"
        " * has one: <name>_file_kind(const struct ws_fk_state *s) gives an FK_*\n"
        " * kind, or -1 for a name not its), and ws_fk_engines(), which asks\n"
        " * them in the registry's order: the first kind given wins, -1 if none.\n"
        " * Included by file_kind.h after its path state.\n"), [
        *(f'#include "{u.name}.files.h"' for u in have), "",
        "static __always_inline int ws_fk_engines(const struct ws_fk_state *s)", "{",
        *(["\tint kind;", ""] if have else []), *asks, "\treturn -1;", "}"])


def generated(probes: Path = PROBES) -> dict[str, str]:
    us = units(probes)
    return {HEADER: header(us), HOOKS_HEADER: hooks_header(), BPF_HEADER: bpf_header(us),
            CAL_HEADER: cal_header(us), FILES_HEADER: files_header(us)}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    probes = Path(args[0]) if args else PROBES
    for name, text in generated(probes).items():
        path = probes / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"engines: wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

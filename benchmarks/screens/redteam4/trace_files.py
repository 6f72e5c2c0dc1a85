"""Every path a traced lm_eval run opened, stat-ed or listed outside its reduced folder, lm-eval's install and Python's.

python trace_files.py TRACE FOLDER [ALLOWED...]: prints the paths by prefix group (found and not found)."""
import re, sys
from collections import Counter
from pathlib import Path

CALL = re.compile(r'^\d+\s+(\w+)\((?:AT_FDCWD, |\d+, )?"([^"]*)"(.*)$')
SYSTEM = ("/root/.pyenv/", "/work/venvs/", "/usr/lib/", "/usr/local/lib/", "/lib/", "/lib64/", "/usr/share/zoneinfo",
          "/proc/", "/sys/", "/dev/", "/etc/ld.so", "/etc/localtime", "/usr/bin/", "/bin/", "/etc/ssl", "/usr/share/",
          "/etc/nsswitch", "/etc/host", "/etc/resolv", "/etc/passwd", "/etc/gai.conf", "/etc/mime.types")


def main(trace, folder, *allowed):
    folder = str(Path(folder).resolve())
    ok = (folder, *[str(Path(a).resolve()) for a in allowed])
    seen = Counter()
    for line in open(trace, errors="replace"):
        m = CALL.match(line)
        if not m:
            continue
        call, path, rest = m.groups()
        if not path.startswith("/"):
            path = "CWD/" + path
        if path.startswith(ok):
            continue
        found = "ENOENT" not in rest and "= -1" not in rest
        key = "/".join(path.split("/")[:6]) if path.startswith(SYSTEM) else path
        if path.startswith(("/root/.cache/huggingface/", "/root/.pyenv", "/work/wt-redteam4/")):  # caches, installs
            key = "/".join(path.split("/")[:4]) + "/..."
        if "/.git" in path or path.endswith("/HEAD") or "gitconfig" in path or path.endswith("/git"):
            key = "(git: lm-eval asks git for a commit hash)"
        seen[(key, call, found)] += 1
    for (p, call, found), n in sorted(seen.items()):
        if p.startswith(SYSTEM) or p in ("/root", "/tmp", "/work", "/work/venvs", "/proc"):
            continue
        print(f"{'found  ' if found else 'absent '} {call:10s} x{n:<4d} {p[:150]}")
    sysn = sum(n for (p, _, _), n in seen.items() if p.startswith(SYSTEM))
    print(f"({sysn} calls under Python's, lm-eval's and the system's own folders not listed)")
    etc = sorted({p for (p, _, _) in seen if p.startswith("/etc/")})
    print("under /etc:", etc)


if __name__ == "__main__":
    main(*sys.argv[1:])

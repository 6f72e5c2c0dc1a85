"""Hostile input around lm-eval 0.4.0-0.4.2's per-sample logs, for the fifth red-team pass: each case a copy of the
committed 0.4.2 fixture run with one thing changed, ingested into a fresh store and read as predict reads logs.

python early_logs.py ROOT [CASE ...]: prints each case's ingest report and predict's reading (or its error); a read
still blocked after 20 s is printed as HANG (a FIFO)."""
import gzip, json, os, re, shutil, sys, threading
from pathlib import Path

from harness_ext.methods.reduction.item_predict import read_item_logs
from harness_ext.store.db import Store
from harness_ext.store.ingest import ingest_paths

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/rt5/c")

FIX = Path(__file__).resolve().parents[3] / "tests/fixtures/lm_eval_early_logs/lm_eval_0.4.2"


def make(dest, model_args=None, tasks=None, edit=None):
    dest = Path(dest); shutil.rmtree(dest, ignore_errors=True); dest.mkdir(parents=True)
    doc = json.loads((FIX/"results.json").read_text())
    old = "pretrained__standin__m99,seed__99"
    samples = {t: gzip.decompress((FIX/f"{old}_{t}.jsonl.gz").read_bytes()) for t in ("t_mc","t_gen")}
    if model_args is not None: doc["config"]["model_args"] = model_args
    if tasks:
        for old_t, new_t in tasks.items():
            doc["configs"][new_t] = doc["configs"].pop(old_t); doc["results"][new_t] = doc["results"].pop(old_t)
            samples[new_t] = samples.pop(old_t)
    if edit: edit(doc, samples)
    import re
    pre = re.sub("/|=", "__", doc["config"]["model_args"]).replace("\x00","")
    (dest/"results.json").write_text(json.dumps(doc))
    out = {}
    for t, b in samples.items():
        p = dest/f"{pre}_{t}.jsonl"; p.write_bytes(b); out[t] = p
    return dest, doc, out


def go(name, d):
    def work():
        try:
            with Store.open(f"{ROOT}/{name}.duckdb") as s:
                rep = ingest_paths(s, [d], show_progress=False)
                r = [(f.path.split('/')[-1][:45], f.status, (f.reason or '')[:200]) for f in rep.files]
                n = s.con.execute("select count(*), count(distinct task) from samples").fetchall()
            print(name, "INGEST", r, n, flush=True)
        except Exception as e:
            print(name, "INGEST EXC", type(e).__name__, str(e)[:300], flush=True)
        try:
            long, *_ = read_item_logs([str(d)])
            print(name, "PREDICT-READ", len(long), sorted(set(long["task"])), flush=True)
        except Exception as e:
            print(name, "PREDICT EXC", type(e).__name__, str(e)[:300], flush=True)
    t = threading.Thread(target=work, daemon=True); t.start(); t.join(20)
    if t.is_alive(): print(name, "HANG >20s", flush=True)

P = "pretrained__standin__m99,seed__99"
which = sys.argv[2:]
def want(k): return not which or k in which
cases = {
 "dotdot": dict(model_args="pretrained=../../etc/passwd"),
 "meta": dict(model_args="pretrained=$(id);`x`|{{7*7}}: [*a] #x"),
 "md": dict(model_args="pretrained=[x](http://e)|<b>"),
 "taskdot": dict(tasks={"t_mc": "..", "t_gen": "."}),
 "taskempty": dict(tasks={"t_mc": ""}),
 "taskmeta": dict(tasks={"t_mc": "{{ 7*7 }}", "t_gen": "!function evil.fn"}),
 "nul": dict(model_args="pretrained=a\u0000b"),
 "ctrl": dict(model_args="pretrained=a\u202eb"),
 "hugeint": dict(edit=lambda d, s: d["results"]["t_mc"].__setitem__("acc,none", 10**400)),
 "nanres": dict(edit=lambda d, s: d["results"]["t_mc"].__setitem__("acc,none", float("nan"))),
}
for k, v in cases.items():
    if want(k):
        go(k, make(f"{ROOT}/{k}", **v)[0])
if want("fifo"):
    d, doc, out = make(f"{ROOT}/fifo"); os.unlink(out["t_mc"]); os.mkfifo(out["t_mc"]); go("fifo", d)
if want("fiforesults"):
    d, doc, out = make(f"{ROOT}/fiforesults")
    os.unlink(d/"results.json")
    os.mkfifo(d/"results.json")
    go("fiforesults", d)
if want("symlog"):
    d, doc, out = make(f"{ROOT}/symlog"); os.makedirs(f"{ROOT}/outside", exist_ok=True)
    os.replace(out["t_mc"], f"{ROOT}/outside/secret.jsonl")
    os.symlink(f"{ROOT}/outside/secret.jsonl", out["t_mc"])
    go("symlog", d)
if want("symres"):
    d, doc, out = make(f"{ROOT}/symres"); os.makedirs(f"{ROOT}/outside", exist_ok=True)
    os.replace(d/"results.json", f"{ROOT}/outside/results.json")
    os.symlink(f"{ROOT}/outside/results.json", d/"results.json")
    go("symres", d)
if want("deep"):
    d, doc, out = make(f"{ROOT}/deep"); out["t_mc"].write_text("[" * 200000 + "]" * 200000); go("deep", d)
if want("deepsample"):
    d, doc, out = make(f"{ROOT}/deepsample")
    deep = "[" * 50000 + "]" * 50000
    out["t_mc"].write_text(json.dumps([{"doc_id": 0, "acc": 1, "doc": 0}]).replace('"doc": 0', '"doc": ' + deep))
    go("deepsample", d)
if want("gzbomb"):
    d, doc, out = make(f"{ROOT}/gzbomb"); os.unlink(out["t_mc"])
    with gzip.open(str(out["t_mc"]) + ".gz", "wb") as f:
        f.write(b"[" + b" " * (300 * 2**20) + b"]")
    go("gzbomb", d)
if want("bigarray"):
    d, doc, out = make(f"{ROOT}/bigarray")
    out["t_mc"].write_text("[" + ",".join(['{"doc_id":%d,"acc":1}' % i for i in range(300000)]) + "]")
    go("bigarray", d)
if want("dupdoc"):
    d, doc, out = make(f"{ROOT}/dupdoc")
    s = json.loads(out["t_mc"].read_text())
    s.append(s[0])
    out["t_mc"].write_text(json.dumps(s))
    go("dupdoc", d)
if want("dupfilter"):
    def ed(doc, samples):
        doc["configs"]["t_gen"]["filter_list"][1]["name"] = doc["configs"]["t_gen"]["filter_list"][0]["name"]
    d, doc, out = make(f"{ROOT}/dupfilter", edit=ed); go("dupfilter", d)
if want("filterinject"):
    def ed(doc, samples):
        doc["configs"]["t_gen"]["filter_list"][1]["name"] = "x: y\n- include: /etc/passwd"
    d, doc, out = make(f"{ROOT}/filterinject", edit=ed); go("filterinject", d)
if want("filterkey"):
    d, doc, out = make(f"{ROOT}/filterkey")
    s = json.loads(out["t_mc"].read_text())
    s[0]["filter"] = "../../x"
    s[1]["filter"] = {"a": 1}
    out["t_mc"].write_text(json.dumps(s))
    go("filterkey", d)
if want("nanmetric"):
    d, doc, out = make(f"{ROOT}/nanmetric")
    t = out["t_mc"].read_text()
    t = t.replace('"acc": 1.0', '"acc": NaN', 3).replace('"acc": 0.0', '"acc": Infinity', 1)
    out["t_mc"].write_text(t)
    go("nanmetric", d)
if want("threefilter"):
    def ed(doc, samples):
        doc["configs"]["t_gen"]["filter_list"].append({"name": "third"})
    d, doc, out = make(f"{ROOT}/threefilter", edit=ed); go("threefilter", d)
if want("claim"):
    # a second results file claims the other run's log: two json files, no results.json
    d, doc, out = make(f"{ROOT}/claim"); os.rename(d/"results.json", d/"a.json")
    doc2 = json.loads((d/"a.json").read_text())
    doc2["config"]["model_args"] = "pretrained=evil/x"
    (d/"b.json").write_text(json.dumps(doc2))
    os.link(out["t_mc"], d/"pretrained__evil__x_t_mc.jsonl"); go("claim", d)
if want("long"):
    ma = "pretrained=" + "a" * 5000
    def ed(doc, samples): doc["config"]["model_args"] = ma
    try:
        d, doc, out = make(f"{ROOT}/long", edit=ed)
    except OSError as e:
        print("long: cannot name the file:", e)

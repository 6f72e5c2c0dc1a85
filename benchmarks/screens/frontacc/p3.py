import sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2])); sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import screen
cand = sys.argv[1]
screen.apply(None if cand == "prod" else cand)
import quality_holdout as qh
raise SystemExit(qh.main(sys.argv[2:]))

import sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import screen
cand = sys.argv[1]
screen.apply(None if cand == "prod" else cand)
from harness_ext.cli import main
sys.argv = ["harness-ext"] + sys.argv[2:]
rc = main()
screen.report()
raise SystemExit(rc)

import sys, logging
logging.disable(logging.WARNING)
import lm_eval
from lm_eval.tasks import TaskManager, get_task_dict
F, group = sys.argv[1], sys.argv[2]
tm = TaskManager(include_path=F)
members = [l.strip() for l in open(f"{F}/{group}_tasks.txt") if l.strip()]
known = set(tm.all_tasks)
print(f"lm_eval {getattr(lm_eval, '__version__', '?')} {F}: group indexed={group in known}; members known {sum(m in known for m in members)}/{len(members)}", end="; ")
try:
    get_task_dict([group], tm)
    print("loaded (tasks built)")
except Exception as e:
    print(f"load: {type(e).__name__}: {str(e)[:150]}")

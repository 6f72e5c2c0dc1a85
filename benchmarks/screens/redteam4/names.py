"""The hostile names of the fourth red-team pass (the third pass's 22, plus lm-eval and HELM specific ones)."""
NAMES = ["../../../tmp/rt4_escaped", "/etc/passwd", "C:\\evil\\x", "~/.bashrc", "!!python/object/apply:os.system ['id']",
         "!function evil.fn", "include: /etc/passwd", "{{ 7*7 }}", "{% include '/etc/passwd' %}", "a" * 300,
         "\u043c\u043c\u043bu", "\u202eevil\u202c", "x*", "key: value", "&a [*a,*a]", "evil.yaml", "mmlu", "- item",
         "#c", "${HOME}", "arc_easy,hellaswag", "evil.py@task", "plain_one", "plain_two"]

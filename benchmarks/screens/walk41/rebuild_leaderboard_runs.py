#!/usr/bin/env python
"""Rebuild two lm-eval 0.4.7-era results files (csabakecskemeti/lm_eval_results @ 3a119928) from their read values:
results, group_subtasks, n-samples, config and per-task config essentials (configs trimmed to the fields that matter)."""
import json, sys, pathlib
BBH = ["boolean_expressions","causal_judgement","date_understanding","disambiguation_qa","formal_fallacies",
       "geometric_shapes","hyperbaton","logical_deduction_five_objects","logical_deduction_seven_objects",
       "logical_deduction_three_objects","movie_recommendation","navigate","object_counting","penguins_in_a_table",
       "reasoning_about_colored_objects","ruin_names","salient_translation_error_detection","snarks",
       "sports_understanding","temporal_sequences","tracking_shuffled_objects_five_objects",
       "tracking_shuffled_objects_seven_objects","tracking_shuffled_objects_three_objects","web_of_lies"]
BBH_N = {"causal_judgement":187,"penguins_in_a_table":146,"snarks":178}
MATH = ["algebra","counting_and_prob","geometry","intermediate_algebra","num_theory","prealgebra","precalculus"]
MATH_N = dict(zip(MATH,[307,123,132,280,154,193,135]))
GPQA_N = {"diamond":198,"extended":546,"main":448}
MUSR_N = {"murder_mysteries":250,"object_placements":256,"team_allocation":250}
L = {  # Llama-3.1-8B-Instruct, results_2025-01-25T04-48-43.622918.json
 "hellaswag": (0.5908185620394344, 0.7929695279824737),
 "bbh": [0.82,0.5668449197860963,0.468,0.536,0.556,0.34,0.62,0.424,0.424,0.676,0.64,0.552,0.464,0.4520547945205479,0.604,0.644,0.508,0.6741573033707865,0.668,0.356,0.208,0.144,0.36,0.544],
 "gpqa": [0.3181818181818182,0.29120879120879123,0.3482142857142857],
 "ifeval": (0.4048059149722736,0.5587529976019184,0.4454713493530499,0.5911270983213429),
 "math": [0.31596091205211724,0.08130081300813008,0.05303030303030303,0.02857142857142857,0.12337662337662338,0.31088082901554404,0.044444444444444446],
 "mmlu_pro": 0.38081781914893614,
 "musr": [0.532,0.35546875,0.308]}
D = {  # DeepSeek-R1-Distill-Llama-8B, results_2025-01-24T19-02-29.392595.json
 "hellaswag": (0.5558653654650468, 0.7435769766978689),
 "bbh": [0.808,0.5508021390374331,0.424,0.224,0.52,0.236,0.484,0.324,0.42,0.404,0.688,0.624,0.404,0.2945205479452055,0.412,0.46,0.344,0.5112359550561798,0.488,0.208,0.18,0.104,0.34,0.488],
 "gpqa": [0.2878787878787879,0.30036630036630035,0.30357142857142855],
 "ifeval": (0.28650646950092423,0.42206235011990406,0.31053604436229204,0.4448441247002398),
 "math": [0.5439739413680782,0.22764227642276422,0.25,0.125,0.42857142857142855,0.5077720207253886,0.07407407407407407],
 "mmlu_pro": 0.27410239361702127,
 "musr": [0.52,0.30859375,0.312]}

def cfg(task, path, name, split, metric, out="multiple_choice", fs=0, agg="mean"):
    c = {"task": task, "dataset_path": path, "test_split": split, "num_fewshot": fs, "output_type": out,
         "metric_list": [{"metric": m, "aggregation": agg, "higher_is_better": True} for m in metric],
         "repeats": 1, "metadata": {"version": 1.0}}
    if name: c["dataset_name"] = name
    return c

def build(v, model, limit=None):
    res, gs, ns, cf, nshot = {}, {}, {}, {}, {}
    def put(t, vals, n, c, alias):
        res[t] = {"alias": alias, **vals}; eff = n if limit is None else min(n, limit)
        ns[t] = {"original": n, "effective": eff}; cf[t] = c; nshot[t] = c["num_fewshot"]
    put("hellaswag", {"acc,none": v["hellaswag"][0], "acc_norm,none": v["hellaswag"][1]}, 10042,
        {**cfg("hellaswag","hellaswag",None,None,["acc","acc_norm"]), "validation_split": "validation"}, "hellaswag")
    gs["hellaswag"] = []
    for grp, names, vals, nmap, dflt, met, mk in (
            ("leaderboard_bbh", BBH, v["bbh"], BBH_N, 250, "acc_norm", lambda s: ("SaylorTwift/bbh", s, 3)),
            ("leaderboard_gpqa", list(GPQA_N), v["gpqa"], GPQA_N, 0, "acc_norm", lambda s: ("Idavidrein/gpqa", f"gpqa_{s}", 0)),
            ("leaderboard_math_hard", MATH, v["math"], MATH_N, 0, "exact_match", lambda s: ("lighteval/MATH-Hard", s, 4)),
            ("leaderboard_musr", list(MUSR_N), v["musr"], MUSR_N, 0, "acc_norm", lambda s: ("TAUR-Lab/MuSR", None, 0))):
        res[grp] = {" ": " ", "alias": grp}; gs[grp] = []
        for s, x in zip(names, vals):
            t = f"{grp.replace('_hard','')}_{s}" + ("_hard" if grp == "leaderboard_math_hard" else "")
            if grp == "leaderboard_bbh": t = f"leaderboard_bbh_{s}"
            gs[grp].append(t); p, nm, fs = mk(s)
            out = "generate_until" if met == "exact_match" else "multiple_choice"
            put(t, {f"{met},none": x}, nmap.get(s, dflt), cfg(t, p, nm, "test", [met], out, fs), f" - {t}")
    i = v["ifeval"]
    put("leaderboard_ifeval", {"prompt_level_strict_acc,none": i[0], "inst_level_strict_acc,none": i[1],
        "inst_level_strict_acc_stderr,none": "N/A", "prompt_level_loose_acc,none": i[2], "inst_level_loose_acc,none": i[3]},
        541, {**cfg("leaderboard_ifeval","wis-k/instruction-following-eval",None,"train",
              ["prompt_level_strict_acc","prompt_level_loose_acc"], "generate_until"),
              "metric_list": [{"metric":"prompt_level_strict_acc","aggregation":"mean","higher_is_better":True},
                              {"metric":"inst_level_strict_acc","aggregation":"def agg_inst_level_acc(items):\n    flat_items = [item for sublist in items for item in sublist]\n    inst_level_acc = sum(flat_items) / len(flat_items)\n    return inst_level_acc\n","higher_is_better":True},
                              {"metric":"prompt_level_loose_acc","aggregation":"mean","higher_is_better":True},
                              {"metric":"inst_level_loose_acc","aggregation":"def agg_inst_level_acc(items):\n    flat_items = [item for sublist in items for item in sublist]\n    inst_level_acc = sum(flat_items) / len(flat_items)\n    return inst_level_acc\n","higher_is_better":True}]},
        "leaderboard_ifeval"); gs["leaderboard_ifeval"] = []
    put("leaderboard_mmlu_pro", {"acc,none": v["mmlu_pro"]}, 12032,
        cfg("leaderboard_mmlu_pro","TIGER-Lab/MMLU-Pro",None,"test",["acc"],fs=5), "leaderboard_mmlu_pro")
    gs["leaderboard_mmlu_pro"] = []
    return {"results": res, "group_subtasks": gs, "configs": cf, "versions": {t: 1.0 for t in cf}, "n-shot": nshot,
            "n-samples": ns, "config": {"model": "hf", "model_args": f"pretrained={model},dtype=float16", "limit": limit,
            "batch_size": "auto:4", "bootstrap_iters": 100000, "random_seed": 0}, "git_hash": "0230356",
            "date": 1737783980.8, "transformers_version": "4.46.3", "model_source": "hf", "model_name": model,
            "model_name_sanitized": model.replace("/", "__")}

out = pathlib.Path(sys.argv[1])
for v, m, stamp in ((L, "meta-llama/Llama-3.1-8B-Instruct", "2025-01-25T04-48-43.622918"),
                    (D, "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "2025-01-24T19-02-29.392595")):
    d = out / m.replace("/", "__"); d.mkdir(parents=True, exist_ok=True)
    (d / f"results_{stamp}.json").write_text(json.dumps(build(v, m), indent=2))
print("ok")

"""Rebuild ranks 1-57 of embeddings-benchmark/leaderboard boards_data/fr/data_tasks/Classification/default.jsonl
at 04cf2e295072d06e53c80d42380faf44ed9ba58a (read with the search tool's read_file), record for record, without the leaderboard's "index" field (read as a score column by ingest; the earlier runs measured 6 datasets)."""
import json
T = ["AmazonReviewsClassification (fr)", "MasakhaNEWSClassification (fra)", "MassiveIntentClassification (fr)",
     "MassiveScenarioClassification (fr)", "MTOPDomainClassification (fr)", "MTOPIntentClassification (fr)"]
HF = "https://huggingface.co/"
R = """9|1|hf:Alibaba-NLP/gte-Qwen2-7B-instruct|7613|28.36|3584|131072|81.76|55.53|82.61|81.65|86.64|96.69|87.47
11|2|hf:BAAI/bge-multilingual-gemma2|9242|34.43|3584|8192|81.62|55.19|82.49|79.6|82.18|97.2|93.07
8|3|hf:Alibaba-NLP/gte-Qwen2-1.5B-instruct|1776|6.62|1536|131072|78.02|53.47|85.19|76.65|79.1|93.48|80.23
60|4|hf:jinaai/jina-embeddings-v3|572|2.13|1024|8194|76.54|47.31|74.03|76.32|83.09|96.3|82.21
23|5|hf:GritLM/GritLM-7B|7240|26.97||4096|76.28|54.43|81.35|75.51|77.29|92.25|76.87
35|6|hf:OrdalieTech/Solon-embeddings-large-0.1|560|2.09|1024|514|70.02|42.08|81.52|67.4|71.29|89.26|68.55
56|7|hf:intfloat/multilingual-e5-large-instruct|560|2.09|1024|514|69.32|49.78|78.93|66.88|71.16|85.89|63.26
91|8|https://openai.com/blog/new-and-improved-embedding-model>text-embedding-ada-002|||1536|8191|69.27|43.76|81.52|65.42|71.11|89.38|64.45
27|9|hf:Lajavaness/bilingual-embedding-large|560|2.09|1024|514|69.16|43.42|80.57|66.81|72.99|88.33|62.85
37|10|hf:actualdata/bilingual-embedding-large|560|2.09|1024|514|69.16|43.42|80.57|66.81|72.99|88.33|62.85
10|11|hf:Alibaba-NLP/gte-multilingual-base|305|1.14|768|8192|68.72|39.57|80.66|67.92|72.65|87.49|64.06
0|12|https://docs.mistral.ai/guides/embeddings>mistral-embed|||1024||68.61|41.59|81.4|62.83|69.71|90.05|66.09
4|13|https://docs.voyageai.com/embeddings/>voyage-multilingual-2|||1024|32000|68.56|43.36|74.81|68.06|74.29|90.33|60.52
62|14|hf:manu/sentence_croissant_alpha_v0.1|1280|4.77|2048|2048|68.48|36.62|80.4|65.86|71.6|88.7|67.69
3|15|https://docs.voyageai.com/embeddings/>voyage-law-2|||1024|16000|68.45|41.98|76.42|66.94|72.78|90.12|62.44
61|16|hf:manu/bge-m3-custom-fr|568|2.12|1024|8194|67.57|42.33|70.52|66.7|74.58|90.39|60.88
2|17|https://docs.voyageai.com/embeddings/>voyage-code-2|||1536|16000|67.44|42.15|82.13|63.08|70.15|87.68|59.44
63|18|hf:manu/sentence_croissant_alpha_v0.2|1280|4.77|2048|2048|67.4|36.48|73.18|66.3|71.7|88.96|67.76
81|19|hf:sentence-transformers/sentence-t5-xxl|4865|18.12|768|512|67.36|46.09|79.1|65.91|68.53|86.2|58.33
64|20|hf:manu/sentence_croissant_alpha_v0.3|1280|4.77|2048|2048|67.11|35.11|75.17|66.48|71.47|88.52|65.93
16|21|hf:Cohere/Cohere-embed-multilingual-v3.0|||1024|512|67.08|41.89|83.06|62.94|67.29|86.23|61.07
26|22|hf:Lajavaness/bilingual-embedding-base|278|1.04|768|514|66.74|40.35|77.44|64.99|71.72|86.83|59.13
28|23|hf:Lajavaness/bilingual-embedding-large-8k|568|2.12|1024|8194|66.54|44.11|69.81|66.14|72.74|87.82|58.63
87|24|hf:vprelovac/universal-sentence-encoder-multilingual-large-3|||512|512|66.37|35.09|72.04|65.8|73.47|88.19|63.64
65|25|hf:manu/sentence_croissant_alpha_v0.4|1280|4.77|2048|2048|65.96|34.62|74.29|65.67|71.61|86.97|62.59
90|26|hf:yco/bilingual-embedding-base|278|1.04|768|514|65.92|43.51|72.61|65.15|69.94|85.33|59.01
44|27|hf:dangvantuan/sentence-camembert-large|337|1.26|1024|512|65.82|37.97|80.62|62.65|69.29|85.74|58.62
55|28|hf:intfloat/multilingual-e5-large|560|2.09|1024|514|65.54|42.55|76.11|63.37|68.74|86.23|56.25
29|29|hf:Lajavaness/bilingual-embedding-small|118|0.44|384|512|65.18|36.48|78.44|64.57|69.04|84.19|58.35
80|30|hf:sentence-transformers/sentence-t5-xl|1240|4.62|768|512|65.09|43.52|80.09|60.99|66.42|85.14|54.39
77|31|hf:sentence-transformers/paraphrase-multilingual-mpnet-base-v2|278|1.04|768|514|64.64|39.0|78.1|61.88|67.9|81.21|59.76
66|32|hf:sentence-transformers/LaBSE|471|1.75|768|512|64.6|38.52|77.39|60.47|65.1|84.14|62.01
36|33|hf:Wissam42/sentence-croissant-llm-base|1280|4.77|2048|2048|64.57|34.79|79.29|59.41|65.29|85.52|63.12
86|34|hf:vprelovac/universal-sentence-encoder-multilingual-3|||512|512|64.41|33.51|82.06|61.19|70.22|85.5|53.98
54|35|hf:intfloat/multilingual-e5-base|278|1.04|768|514|63.62|41.55|76.35|61.32|67.37|82.88|52.23
72|36|hf:sentence-transformers/distiluse-base-multilingual-cased-v2|135|0.5|512|512|62.14|35.7|76.87|57.02|65.2|84.61|53.41
79|37|hf:sentence-transformers/sentence-t5-large|168|0.63|768|512|61.64|41.48|80.43|57.01|63.6|79.6|47.73
15|38|hf:Cohere/Cohere-embed-multilingual-light-v3.0|||384|512|61.3|38.6|82.58|56.31|59.5|80.79|50.01
57|39|hf:intfloat/multilingual-e5-small|118|0.44|384|512|61.06|39.68|77.65|57.9|63.9|81.2|46.01
76|40|hf:sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2|118|0.44|384|512|60.99|35.29|71.68|60.24|66.09|78.64|54.01
7|41|hf:AdrienB134/llm2vec-occiglot-mntp|||||60.98|35.07|76.0|56.03|59.3|75.7|63.76
1|42|https://docs.voyageai.com/embeddings/>voyage-2|||1024|1024|59.84|37.26|80.19|53.7|62.46|79.79|45.62
78|43|hf:sentence-transformers/sentence-t5-base|110|0.41|768|512|58.08|37.35|81.21|51.13|59.92|75.03|43.85
53|44|hf:intfloat/e5-mistral-7b-instruct|7111|26.49|4096|32768|57.72|36.71|80.59|46.39|53.86|74.8|53.97
43|45|hf:dangvantuan/sentence-camembert-base|110|0.41|768|512|56.63|36.03|70.36|51.59|61.28|77.1|43.44
85|46|https://huggingface.co/spaces/mteb/leaderboard>text2vec-base-multilingual|||||55.78|34.25|73.84|51.93|58.31|71.83|44.53
58|47|hf:izhx/udever-bloom-1b1|||1536|2048|54.9|35.12|80.83|43.21|49.78|69.24|51.25
5|48|https://github.com/facebookresearch/LASER>LASER2|43|0.16|1024|N/A|53.31|31.12|65.9|46.13|54.32|72.26|50.12
69|49|hf:sentence-transformers/all-mpnet-base-v2|110|0.41|768|514|52.87|28.49|77.77|44.27|54.26|74.88|37.57
67|50|hf:sentence-transformers/all-MiniLM-L12-v2|33|0.12|384|512|52.14|27.54|72.2|44.82|53.76|75.59|38.94
75|51|hf:sentence-transformers/multi-qa-MiniLM-L6-cos-v1|23|0.09|384|512|50.9|27.05|75.62|42.64|49.92|72.97|37.18
68|52|hf:sentence-transformers/all-MiniLM-L6-v2|23|0.09|384|512|50.7|26.88|68.84|42.55|51.14|75.1|39.67
52|53|hf:google-bert/bert-base-multilingual-uncased|168|0.63|768|512|48.37|29.02|75.69|38.01|43.63|64.49|39.4
20|54|hf:Geotrend/bert-base-10lang-cased|138|0.51|768|512|46.1|29.38|63.93|37.28|44.5|63.65|37.87
51|55|hf:google-bert/bert-base-multilingual-cased|179|0.67|768|512|46.1|29.39|64.0|37.3|44.47|63.61|37.84
22|56|hf:Geotrend/bert-base-25lang-cased|138|0.51|768|512|46.09|29.39|63.91|37.3|44.47|63.63|37.86
21|57|hf:Geotrend/bert-base-15lang-cased|138|0.51|768|512|46.09|29.35|63.89|37.28|44.47|63.7|37.85"""
def num(s):
    if s == "": return ""
    try: return int(s)
    except ValueError:
        try: return float(s)
        except ValueError: return s
with open("mteb_fr_classification_ranks1-57.jsonl", "w") as f:
    for line in R.splitlines():
        c = line.split("|")
        if c[2].startswith("hf:"):
            href, text = HF + c[2][3:], c[2][3:].split("/")[-1]
        else:
            href, text = c[2].split(">")
        rec = {"Rank": int(c[1]),
               "Model": f'<a target="_blank" style="text-decoration: underline" href="{href}">{text}</a>',
               "Model Size (Million Parameters)": num(c[3]), "Memory Usage (GB, fp32)": num(c[4]),
               "Embedding Dimensions": num(c[5]), "Max Tokens": num(c[6]), "Average": num(c[7])}
        rec.update({t: num(v) for t, v in zip(T, c[8:])})
        f.write(json.dumps(rec, ensure_ascii=False).replace("/", "\\/") + "\n")

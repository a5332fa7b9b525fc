"""Ingest benchmark: how fast a collection of your own files is indexed, per format, beside
plain LlamaIndex on the same files in the same run.

A corpus is written into a temporary folder with the writers of ``tests/collection_files.py``:
per format ``--files N`` files (default 20) of varied text made from a small word list with a
fixed seed, so runs are comparable: text PDFs of 3 pages each (matplotlib ``PdfPages``), DOCX,
HTML, Markdown with front matter, CSV registers (25 rows each) and PNG scans (N/4 of them:
OCR is slow).

For each format separately, each of ``--repeat`` runs (default 3) in a fresh index folder:

- toolrag: a :class:`~toolrag.CollectionSpec` over that format's folder (CSV: ``reader:
  rows``, a unit per row), ``CollectionIndex(dir, spec, embed).sync(index.loader(root))``,
  then a second sync with nothing changed (it skips unchanged files);
- baseline: ``SimpleDirectoryReader(input_files=...)`` on the same files, then
  ``VectorStoreIndex.from_documents`` on a ``LanceDBVectorStore``, same embedding model.
  PNG: the baseline's ``ImageReader`` reads no text without a model from the hub, so it is
  reported as not supported (with the characters it read), not timed.

Reported per format: files, units (PDF pages; CSV rows; otherwise files) and chunks written,
median seconds, files/s and units/s, the ratio toolrag/baseline seconds, and the no-change
re-sync seconds. Each side uses its defaults (toolrag chunks of 400 tokens, LlamaIndex 1,024).

    .venv/bin/python -m benchmarks.ingest [--files 20] [--repeat 3] [--formats pdf,csv]
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.results import result_name, write_result
from tests.collection_files import write_docx, write_scan
from toolrag import CollectionSpec, FieldSpec, Settings, make_embedding
from toolrag.content import CollectionIndex

SEED = 50
PDF_PAGES = 3
PDF_LINES = 30  # lines of text per PDF page
CSV_ROWS = 25
_VOCABULARY = (
    "safety lab staff policy leave annual manager report sample freezer centrifuge microscope "
    "budget training access badge visitor waste solvent spill goggles gloves audit contract "
    "supplier invoice order delivery room floor schedule shift weekend holiday remote office "
    "laptop password network backup server review approval request form deadline quarter "
    "project grant data storage archive record calibration maintenance service warranty "
    "inventory purchase price department research assistant officer committee meeting"
)
WORDS = tuple(_VOCABULARY.split())
DEPARTMENTS = ("safety", "hr", "it", "finance", "facilities")
STATUSES = ("in_service", "broken", "on_loan", "retired")
FORMATS = ("pdf", "docx", "html", "md", "csv", "png")
UNIT = {"pdf": "page", "csv": "row"}  # the rest: one unit per file


# --- the corpus ----------------------------------------------------------------------------------
def sentence(rng: random.Random, low: int = 7, high: int = 12) -> str:
    words = rng.choices(WORDS, k=rng.randint(low, high))
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, sentences: int = 4) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))


def write_pdf_pages(path: Path, title: str, pages: list[list[str]]) -> None:
    """A text PDF of several pages (TrueType fonts: the text layer is extractable)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with plt.rc_context({"pdf.fonttype": 42}), PdfPages(path, metadata={"Title": title}) as pdf:
        for number, lines in enumerate(pages, start=1):
            fig = plt.figure(figsize=(8.5, 11))
            body = f"{title}, page {number}\n\n" + "\n".join(lines)
            fig.text(0.08, 0.94, body, fontsize=10, va="top")
            pdf.savefig(fig)
            plt.close(fig)


def make_corpus(root: Path, files: int) -> dict[str, list[Path]]:
    """Write ``files`` files per format (PNG: a quarter) under ``root/<format>/``."""
    rng = random.Random(SEED)
    written: dict[str, list[Path]] = {f: [] for f in FORMATS}
    for fmt in FORMATS:
        (root / fmt).mkdir(parents=True, exist_ok=True)
    for n in range(files):
        title = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} notes {n:03d}"
        pages = [[sentence(rng) for _ in range(PDF_LINES)] for _ in range(PDF_PAGES)]
        write_pdf_pages(root / "pdf" / f"doc{n:03d}.pdf", title, pages)
        write_docx(root / "docx" / f"doc{n:03d}.docx", title, [paragraph(rng) for _ in range(12)])
        html = "".join(f"<p>{paragraph(rng)}</p>" for _ in range(10))
        (root / "html" / f"doc{n:03d}.html").write_text(
            f"<html><head><title>{title}</title><style>p{{color:red}}</style></head><body>"
            f"<h1>{title}</h1>{html}<script>var hidden = 'not text';</script></body></html>",
            encoding="utf-8",
        )
        md = "\n\n".join(paragraph(rng) for _ in range(10))
        (root / "md" / f"doc{n:03d}.md").write_text(
            f"---\ntitle: {title}\ndepartment: {rng.choice(DEPARTMENTS)}\n"
            f"effective: 2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\n---\n"
            f"# {title}\n\n{md}\n",
            encoding="utf-8",
        )
        with (root / "csv" / f"register{n:03d}.csv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["asset", "name", "status", "price", "notes"])
            for row in range(CSV_ROWS):
                writer.writerow([
                    f"EQ-{n:03d}-{row:02d}",
                    f"{rng.choice(WORDS)} {rng.choice(WORDS)}".capitalize(),
                    rng.choice(STATUSES),
                    rng.randint(100, 250_000),
                    sentence(rng),
                ])  # fmt: skip
        if n < max(1, files // 4):
            lines = [f"NOTICE {n:03d}: " + " ".join(rng.choices(WORDS, k=4)).upper()]
            lines += [sentence(rng, 4, 6) for _ in range(5)]
            write_scan(root / "png" / f"scan{n:03d}.png", lines)
    for fmt in FORMATS:
        written[fmt] = sorted((root / fmt).iterdir())
    return written


def spec_for(fmt: str, rows: bool = True) -> CollectionSpec:
    """The collection of one format's folder, declared as a user would (CSV: ``reader: rows``
    unless ``rows`` is false)."""
    description = f"Benchmark corpus: the {fmt.upper()} files of the ingest benchmark."
    if fmt == "csv" and rows:
        return CollectionSpec(
            name=fmt,
            description=description,
            paths=[f"{fmt}/*"],
            reader="rows",
            id_column="asset",
            title_column="name",
            fields=[
                FieldSpec(name="status", type="enum", source="column:status"),
                FieldSpec(name="price", type="number", source="column:price"),
            ],
        )
    fields = []
    if fmt == "md":
        fields = [
            FieldSpec(name="department", type="keyword"),
            FieldSpec(name="effective", type="date"),
        ]
    return CollectionSpec(name=fmt, description=description, paths=[f"{fmt}/*"], fields=fields)


def units_of(fmt: str, paths: list[Path]) -> int:
    if fmt == "pdf":
        return PDF_PAGES * len(paths)
    if fmt == "csv":
        return CSV_ROWS * len(paths)
    return len(paths)


# --- the two sides -------------------------------------------------------------------------------
def toolrag_run(root: Path, spec: CollectionSpec, embed: Any, index_dir: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    index = CollectionIndex(index_dir, spec, embed)
    report = index.sync(index.loader(root))
    seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = index.sync(index.loader(root))
    resync = time.perf_counter() - t0
    return {
        "seconds": seconds,
        "chunks": report.chunks_written,
        "files_indexed": len(report.added),
        "errors": report.errors,
        "resync_seconds": resync,
        "resync_chunks_written": again.chunks_written,
        "resync_unchanged": again.unchanged,
    }


def baseline_run(files: list[Path], embed: Any, index_dir: Path) -> dict[str, Any]:
    from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
    from llama_index.vector_stores.lancedb import LanceDBVectorStore

    t0 = time.perf_counter()
    docs = SimpleDirectoryReader(input_files=files).load_data()
    store = LanceDBVectorStore(uri=str(index_dir), table_name="baseline")
    VectorStoreIndex.from_documents(
        docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed
    )
    seconds = time.perf_counter() - t0
    chunks = store.table.count_rows() if store.table is not None else 0
    return {"seconds": seconds, "chunks": chunks, "documents": len(docs)}


def baseline_png(files: list[Path]) -> dict[str, Any]:
    """What the baseline's reader makes of the scans: documents without text."""
    from llama_index.core import SimpleDirectoryReader

    docs = SimpleDirectoryReader(input_files=files).load_data()
    return {
        "supported": False,
        "why": "SimpleDirectoryReader's ImageReader has no OCR: it returns ImageDocuments "
        "without text unless parse_text=True, which needs a model from the Hugging Face hub",
        "documents": len(docs),
        "text_chars": sum(len(d.text or "") for d in docs),
    }


def repeat(times: int, run: Callable[[Path], dict[str, Any]]) -> list[dict[str, Any]]:
    """``run`` ``times`` times, each in a fresh index folder."""
    runs = []
    for _ in range(times):
        with tempfile.TemporaryDirectory() as index_dir:
            runs.append(run(Path(index_dir)))
    return runs


def summary(runs: list[dict[str, Any]], files: int, units: int) -> dict[str, Any]:
    seconds = statistics.median(r["seconds"] for r in runs)
    out = {
        "seconds": round(seconds, 3),
        "seconds_runs": [round(r["seconds"], 3) for r in runs],
        "files_per_s": round(files / seconds, 2),
        "units_per_s": round(units / seconds, 2),
        "chunks": runs[-1]["chunks"],
        "chunks_per_s": round(runs[-1]["chunks"] / seconds, 2),
    }
    if "resync_seconds" in runs[0]:
        out |= {
            "files_indexed": runs[-1]["files_indexed"],
            "errors": runs[-1]["errors"][:5],
            "resync_unchanged_seconds": round(
                statistics.median(r["resync_seconds"] for r in runs), 4
            ),
            "resync_chunks_written": max(r["resync_chunks_written"] for r in runs),
            "resync_unchanged_files": runs[-1]["resync_unchanged"],
        }
    else:
        out["documents"] = runs[-1]["documents"]
    return out


def bench_format(root: Path, fmt: str, paths: list[Path], embed: Any, times: int) -> dict[str, Any]:
    units = units_of(fmt, paths)
    row: dict[str, Any] = {"files": len(paths), "unit": UNIT.get(fmt, "file"), "units": units}
    ours = repeat(times, lambda d: toolrag_run(root, spec_for(fmt), embed, d))
    row["toolrag"] = summary(ours, len(paths), units)
    if fmt == "csv":  # also as the baseline reads it: the file's text, a unit per file
        row["toolrag_reader"] = "rows (a unit per row); the baseline reads a document per file"
        auto = repeat(times, lambda d: toolrag_run(root, spec_for(fmt, rows=False), embed, d))
        row["toolrag_reader_auto"] = summary(auto, len(paths), units)
    if fmt == "png":
        row["baseline"] = baseline_png(paths)
        row["ratio_toolrag_over_baseline_s"] = None
        return row
    base = repeat(times, lambda d: baseline_run(paths, embed, d))
    row["baseline"] = summary(base, len(paths), units)
    row["ratio_toolrag_over_baseline_s"] = round(
        row["toolrag"]["seconds"] / row["baseline"]["seconds"], 2
    )
    return row


def print_table(results: dict[str, dict[str, Any]]) -> None:
    head = ("format", "files", "units", "files/s", "units/s", "base f/s", "base u/s",
            "toolrag s", "base s", "ratio", "re-sync s")  # fmt: skip
    line = "{:<7}" + "{:>11}" * (len(head) - 1)
    print(line.format(*head))
    for fmt, r in results.items():
        ours, base = r["toolrag"], r["baseline"]
        na = "n/a" if base.get("supported") is False else None
        print(
            line.format(
                fmt,
                r["files"],
                f"{r['units']} {r['unit']}",
                ours["files_per_s"],
                ours["units_per_s"],
                na or base["files_per_s"],
                na or base["units_per_s"],
                ours["seconds"],
                na or base["seconds"],
                na or r["ratio_toolrag_over_baseline_s"],
                ours["resync_unchanged_seconds"],
            )
        )
    if "csv" in results:
        auto = results["csv"]["toolrag_reader_auto"]
        print(f"csv with reader: auto (a unit per file): toolrag {auto['seconds']} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=20, help="files per format (PNG: N/4)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; the median counts")
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated subset")
    args = parser.parse_args()
    formats = [f for f in args.formats.split(",") if f]
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        parser.error(f"unknown formats {unknown}; choose from {list(FORMATS)}")
    settings = Settings()
    embed = make_embedding(settings)
    embed.get_text_embedding("warm up")
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        corpus = make_corpus(root, args.files)
        corpus_s = time.perf_counter() - t0
        for fmt in formats:
            print(f"{fmt}: {len(corpus[fmt])} files", flush=True)
            results[fmt] = bench_format(root, fmt, corpus[fmt], embed, args.repeat)
    figures = {
        "embed_model": settings.embed_model,
        "files_per_format": args.files,
        "scans": f"PNG scans: {max(1, args.files // 4)} files (N/4: OCR is slow)",
        "pdf_pages_per_file": PDF_PAGES,
        "csv_rows_per_file": CSV_ROWS,
        "repeat": args.repeat,
        "seed": SEED,
        "corpus_write_s": round(corpus_s, 1),
        "units": "PDF: pages; CSV: rows (toolrag reads it with reader: rows); others: files",
        "seconds": "median of the runs, each in a fresh index folder; toolrag: index + sync, "
        "baseline: SimpleDirectoryReader + VectorStoreIndex.from_documents on LanceDB",
        "resync": "a second toolrag sync with nothing changed; plain LlamaIndex keeps no "
        "manifest, so it has no such re-run (not measured)",
        "chunking": "each side's defaults: toolrag 400/40 tokens, LlamaIndex SentenceSplitter "
        "1024/200",
        "results": results,
    }
    partial = {"files": args.files if args.files != 20 else 0}
    partial |= {"repeat": args.repeat if args.repeat != 3 else 0}
    partial |= {"formats": args.formats if formats != list(FORMATS) else ""}
    write_result(result_name("ingest", **partial), figures)
    print_table(results)


if __name__ == "__main__":
    main()

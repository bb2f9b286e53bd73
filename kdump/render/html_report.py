"""``kdump report``'s page: one self-contained HTML file (styles inline, charts as inline SVG drawn here
(:mod:`kdump.render.svg`), no script to run, no font or file fetched), written from the units of
:mod:`kdump.facts.incident` as they come.

The overview comes first on the page but is known last, so :class:`HtmlSink` writes each partition's section to
a temporary file as its unit arrives and keeps only a table row per partition; :meth:`HtmlSink.end` writes the
head, the overview, the topic and partition tables, the groups and the coordinators, then copies the sections.
Each section carries its facts as JSON (``<script type="application/json" class="kdump-data">``, the objects of
``kdump report --json``), so what a chart shows can be checked against what the commands say."""

from __future__ import annotations

import heapq
import json
import os
from dataclasses import dataclass, field
from typing import Any

from kdump import __version__
from kdump.analysis.compression_sample import SAMPLES
from kdump.facts.incident import CoordinatorReport, GroupsReport, Overview, PartitionReport, ReportUnit
from kdump.facts.output import Output
from kdump.problem import Problem
from kdump.render import incident
from kdump.render import retention as retention_render
from kdump.render import txn as txn_render
from kdump.render.incident import finding_message
from kdump.render.log_summary import human_size
from kdump.render.problem_text import sentences
from kdump.render.svg import OUTLIER, Chart, SizeScale, escape, iso, short_number, size_scale
from kdump.render.tables import duration
from kdump.storage import locations

#: Partitions drawn in full by default (the others are rows of the tables): a page stays quick to open.
DEFAULT_MAX_PARTITIONS = 200
#: Producers (rows) of a transactions chart; topics of an overview chart; partitions of a group's lag chart.
MAX_ROWS = 30
#: A group's table of committed partitions longer than this is folded (a <details>), lagging most first.
MAX_TABLE_ROWS = 50


def _json_script(obj: dict[str, Any], unit: str) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    # nothing in the data can close the element or open a comment
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" class="kdump-data" data-unit="{unit}">{text}</script>\n'


def _e(v: object) -> str:
    return escape("-" if v is None else str(v))


def _num(v: int | None) -> str:
    return "-" if v is None else f"{v:,}"


@dataclass
class _Row:
    anchor: str | None
    topic: str | None
    partition: int | None
    directory: str
    internal: bool
    segments: int
    size: int
    records: int
    log_start: int | None
    log_end: int | None
    high_watermark: int | None
    min_ts: int | None
    max_ts: int | None
    open_txns: int
    hanging: int
    problems: int
    deleted_bytes: int
    deleted_segments: int
    dirty_ratio: float | None
    unreadable: bool
    kinds: dict[str, int]
    #: The log directory's name, shown beside the partition's when the report covers several.
    log_dir_label: str = ""
    #: The compression sample (:mod:`kdump.analysis.compression_sample`): bytes of the sampled batches on disk
    #: and uncompressed, and whether every compressed batch was in it.
    sampled_bytes: int = 0
    uncompressed_bytes: int = 0
    compression_exact: bool = True
    #: Its place among the report's partitions (its table row is ``#r<index>``).
    index: int = -1
    #: The largest lag of a consumer group on it (0: none), and its offset jumps when not compacted.
    lag: int = 0
    gaps: int = 0

    @property
    def href(self) -> str:
        """Where a link to the partition goes: its drawn section, else its row of the topic's table."""
        return f"#{self.anchor}" if self.anchor else f"#r{self.index}"

    @property
    def name(self) -> str:
        if self.topic is None:
            name = os.path.basename(os.path.normpath(self.directory))
        else:
            name = f"{self.topic}-{self.partition}"
        return f"{name} ({self.log_dir_label})" if self.log_dir_label else name


def _interest(r: _Row) -> tuple[bool, bool, bool, bool, bool, bool, int]:
    """How interesting a partition is to draw, in the order the page says: problems (or unreadable), hanging
    transactions, open ones, a lagging consumer group, retention's pending deletions, offset gaps, then size."""
    return (
        bool(r.problems) or r.unreadable,
        r.hanging > 0,
        r.open_txns > 0,
        r.lag > 0,
        r.deleted_segments > 0,
        r.gaps > 0,
        r.size,
    )


#: What the page says of the order it draws partitions in.
_INTEREST_ORDER = (
    "problems first, then hanging and open transactions, consumer lag, retention's pending deletions, "
    "offset gaps, then the largest"
)

#: Where a drawn section says why it was chosen (filled in once the choice is made).
_WHY_SLOT = "<!--kdump:why-->"


def _why(r: _Row) -> str:
    reasons = []
    if r.problems or r.unreadable:
        reasons.append(f"{r.problems:,} problem(s)" if r.problems else "unreadable")
    if r.hanging:
        reasons.append(f"{r.hanging} hanging transaction(s)")
    elif r.open_txns:
        reasons.append(f"{r.open_txns} open transaction(s)")
    if r.lag:
        reasons.append(f"consumer lag {r.lag:,}")
    if r.deleted_segments:
        reasons.append(f"retention would delete {r.deleted_segments} segment(s)")
    if r.gaps:
        reasons.append(f"{r.gaps:,} offset gap(s)")
    reasons.append(f"{human_size(r.size)}")
    return f'<p class="why">drawn for: {", ".join(reasons)}</p>'


@dataclass
class _Topic:
    name: str
    internal: bool
    partitions: int = 0
    size: int = 0
    records: int = 0
    min_ts: int | None = None
    max_ts: int | None = None
    problems: int = 0
    open_txns: int = 0
    hanging: int = 0
    deleted_bytes: int = 0
    sampled_bytes: int = 0
    uncompressed_bytes: int = 0
    compression_exact: bool = True
    rows: list[_Row] = field(default_factory=list)


class HtmlSink:
    """A :class:`~kdump.facts.report.ReportSink` of :data:`~kdump.facts.incident.ReportUnit` writing the page to
    ``out`` at the end."""

    def __init__(
        self, out: Output, *, paths: list[str], max_partitions: int = DEFAULT_MAX_PARTITIONS
    ) -> None:
        self.out = out
        self.paths = paths
        self.max_partitions = max_partitions
        self.rows: list[_Row] = []
        #: The sections kept (see :meth:`_candidate`): (interest, row index, html), least interesting first.
        self.drawn: list[tuple[tuple[Any, ...], int, PartitionReport]] = []
        self.groups: list[GroupsReport] = []
        self.group_data: list[dict[str, Any]] = []
        self.coordinators: list[CoordinatorReport] = []
        self.overview: Overview | None = None
        self.unreadables: list[Problem] = []

    # the sink protocol
    def fact(self, unit: ReportUnit) -> None:
        if isinstance(unit, PartitionReport):
            self._partition(unit)
        elif isinstance(unit, GroupsReport):
            if unit.groups or unit.problems:
                self.groups.append(unit)
        elif isinstance(unit, CoordinatorReport):
            if unit.transactions or unit.problems:
                self.coordinators.append(unit)
        else:
            self.overview = unit

    def unreadable(self, problem: Problem) -> None:
        self.unreadables.append(problem)

    def end(self) -> None:
        parents = {os.path.dirname(locations.abspath(r.directory)) for r in self.rows}
        if len(parents) > 1:  # the same partition in several log directories: say which
            for r in self.rows:
                r.log_dir_label = os.path.basename(os.path.dirname(locations.abspath(r.directory)))
        w = self.out.write
        w(_HEAD.replace("{title}", escape("kdump report: " + ", ".join(self.paths))))
        w(self._header())
        w(self._overview())
        w(self._topics())
        w(self._groups())
        w(self._coordinators())
        w('<section id="partitions"><h2>Partitions</h2>\n')
        w(self._drawn_note())
        # the topics' partitions, then the internal topics'; each the most interesting first
        drawn = sorted(self.drawn, key=lambda d: d[0], reverse=True)
        drawn.sort(key=lambda d: self.rows[d[1]].internal)
        for _, i, report in drawn:
            w(_partition_section(report, self.rows[i]).replace(_WHY_SLOT, _why(self.rows[i]), 1))
        self.drawn = []
        w("</section>\n")
        if self.overview is not None:
            w(_json_script(incident.overview_object(self.overview), "reportOverview"))
        w(
            f"<footer>kdump {escape(__version__)} &middot; a forensic report of files on disk: figures are "
            "what the files say, predictions are marked as such.</footer>\n</body></html>\n"
        )

    # partitions
    def _partition(self, r: PartitionReport) -> None:
        s = r.summary
        internal = s.topic is not None and s.topic.startswith("__")
        ret = r.retention
        row = _Row(
            None,
            s.topic,
            s.partition,
            s.directory,
            internal,
            s.segments,
            s.size_bytes,
            s.records,
            s.log_start_offset,
            s.log_end_offset,
            s.high_watermark,
            s.min_timestamp,
            s.max_timestamp,
            len(r.txn.open) if r.txn is not None else len(s.open_transactions),
            len(r.txn.hanging) if r.txn is not None else 0,
            sum(r.kinds.values()),
            sum(x.size for x in ret.deleted) if ret is not None else 0,
            len(ret.deleted) if ret is not None else 0,
            ret.compaction.dirty_ratio if ret is not None and ret.compaction is not None else None,
            bool(s.unreadable),
            dict(r.kinds),
        )
        if r.compression is not None:
            row.sampled_bytes = r.compression.sampled_bytes
            row.uncompressed_bytes = r.compression.uncompressed_bytes
            row.compression_exact = r.compression.exact
        row.index = len(self.rows)
        row.lag = r.lag or 0
        row.gaps = r.timeline.offset_jumps if ret is None or ret.compaction is None else 0
        self.rows.append(row)
        if s.records > 0 and not s.unreadable and self.max_partitions > 0:
            self._candidate(r, row)

    def _candidate(self, r: PartitionReport, row: _Row) -> None:
        """Keep ``r`` if it is among the :attr:`max_partitions` most interesting so far: a heap of at most that
        many reports, rendered at the end (a report is about the size of its section: a timeline of at most 240
        runs, at most 200 producers; rendering each as it came drew two sections for every one kept with 3,000
        partitions); one pushed out is dropped, its links then go to its table row."""
        key = (*_interest(row), -row.index)
        drawn = self.drawn
        if len(drawn) >= self.max_partitions and key <= drawn[0][0]:
            return
        row.anchor = f"p{row.index}"
        entry = (key, row.index, r)
        if len(drawn) < self.max_partitions:
            heapq.heappush(drawn, entry)
        else:
            dropped = heapq.heapreplace(drawn, entry)
            self.rows[dropped[1]].anchor = None

    def _drawn_note(self) -> str:
        """How the partitions drawn were chosen, and what the others are (aggregated, with the way to each)."""
        with_records = [r for r in self.rows if r.records and not r.unreadable]
        drawn = {i for _, i, _ in self.drawn}
        rest = [r for r in with_records if r.index not in drawn]
        if not rest:
            return (
                f'<p class="note">{len(drawn):,} partition(s) drawn below, {_INTEREST_ORDER} (the topics\' '
                "partitions before the internal topics').</p>\n"
            )
        counts = [
            (sum(1 for r in rest if r.problems), "with problems"),
            (sum(1 for r in rest if r.open_txns), "with open transactions"),
            (sum(1 for r in rest if r.lag), "with consumer lag"),
            (sum(1 for r in rest if r.deleted_segments), "with retention's pending deletions"),
            (sum(1 for r in rest if r.gaps), "with offset gaps"),
        ]
        some = ", ".join(f"{n:,} {what}" for n, what in counts if n)
        by_topic: dict[str, list[_Row]] = {}
        for r in rest:
            by_topic.setdefault(r.topic or "-", []).append(r)
        biggest = sorted(by_topic.items(), key=lambda kv: -sum(r.size for r in kv[1]))
        rows = "".join(
            f'<tr><td><a href="#t-{_slug(name)}">{escape(name)}</a></td><td>{len(rs):,}</td>'
            f"<td>{human_size(sum(r.size for r in rs))}</td><td>{sum(r.records for r in rs):,}</td>"
            f"<td>{sum(1 for r in rs if r.problems or r.open_txns or r.lag or r.deleted_segments or r.gaps):,}</td>"
            f"<td>{_link(max(rs, key=lambda r: r.size), 'largest')}</td></tr>"
            for name, rs in biggest[:MAX_ROWS]
        )
        more = (
            f"<tr><td>{len(biggest) - MAX_ROWS:,} more topics</td><td>"
            f"{sum(len(rs) for _, rs in biggest[MAX_ROWS:]):,}</td><td>"
            f"{human_size(sum(r.size for _, rs in biggest[MAX_ROWS:] for r in rs))}</td><td></td><td></td><td></td></tr>"
            if len(biggest) > MAX_ROWS
            else ""
        )
        return (
            f'<p class="note">{len(drawn):,} of {len(with_records):,} partitions with records are drawn below, '
            f"{_INTEREST_ORDER} (--max-partitions {self.max_partitions}). The other {len(rest):,} "
            f"({human_size(sum(r.size for r in rest))}, {sum(r.records for r in rest):,} records"
            + (f"; {some}" if some else "")
            + ") are rows of their topic's table above, each with its figures. To draw one, run "
            "<code>kdump report PARTITION-DIRECTORY -o FILE</code> on its directory (its path is the tooltip of its name in the table), "
            "or raise --max-partitions.</p>\n"
            '<details class="rest"><summary>The partitions not drawn, by topic</summary><table><tr><th>topic</th>'
            "<th>partitions not drawn</th><th>size</th><th>records</th><th>with something to see</th>"
            "<th>its largest</th></tr>" + rows + more + "</table></details>\n"
        )

    def _header(self) -> str:
        o = self.overview
        now = "-" if o is None else iso(o.now)
        return (
            '<header><h1>kdump report</h1><p class="sub">'
            + ", ".join(f"<code>{escape(p)}</code>" for p in self.paths)
            + f" &middot; at {now} (UTC) &middot; kdump {escape(__version__)}</p>"
            '<nav><a href="#overview">Overview</a><a href="#health">Health</a><a href="#topics">Topics</a>'
            '<a href="#groups">Consumer groups</a><a href="#coordinators">Transactions</a>'
            '<a href="#partitions">Partitions</a></nav></header>\n'
        )

    def _topic_totals(self) -> list[_Topic]:
        topics: dict[str, _Topic] = {}
        for r in self.rows:
            name = r.topic if r.topic is not None else r.name
            t = topics.get(name)
            if t is None:
                t = topics[name] = _Topic(name, r.internal)
            t.partitions += 1
            t.size += r.size
            t.records += r.records
            if r.min_ts is not None:
                t.min_ts = r.min_ts if t.min_ts is None else min(t.min_ts, r.min_ts)
            if r.max_ts is not None:
                t.max_ts = r.max_ts if t.max_ts is None else max(t.max_ts, r.max_ts)
            t.problems += r.problems
            t.open_txns += r.open_txns
            t.hanging += r.hanging
            t.deleted_bytes += r.deleted_bytes
            t.sampled_bytes += r.sampled_bytes
            t.uncompressed_bytes += r.uncompressed_bytes
            t.compression_exact = t.compression_exact and r.compression_exact
            t.rows.append(r)
        return sorted(topics.values(), key=lambda t: (t.internal, t.name))

    def _overview(self) -> str:
        o = self.overview
        topics = self._topic_totals()
        size = sum(r.size for r in self.rows)
        records = sum(r.records for r in self.rows)
        times = [r.min_ts for r in self.rows if r.min_ts is not None] + [
            r.max_ts for r in self.rows if r.max_ts is not None
        ]
        out = ['<section id="overview"><h2>Overview</h2><div class="cards">']

        def card(label: str, value: str, cls: str = "") -> None:
            out.append(
                f'<div class="card {cls}"><div class="v">{value}</div><div class="l">{escape(label)}</div></div>'
            )

        card("log directories", str(len(o.log_dirs)) if o else "-")
        card(
            "topics",
            str(sum(1 for t in topics if not t.internal))
            + f" (+{sum(1 for t in topics if t.internal)} internal)",
        )
        card("partitions", f"{len(self.rows):,}")
        card("on disk", human_size(size))
        card("records", short_number(records))
        card(
            "time range",
            f'<span class="nw">{iso(min(times))[:16]}</span> &rarr; <span class="nw">{iso(max(times))[:16]}</span>'
            if times
            else "-",
            "wide",
        )
        problems = o.verify.problems if o else 0
        card(
            "verify problems" if o is None or o.crc_checked else "verify problems (CRCs not checked)",
            f"{problems:,}",
            "bad" if problems else ("good" if o is not None and o.crc_checked else ""),
        )
        hanging = sum(r.hanging for r in self.rows)
        open_txns = sum(r.open_txns for r in self.rows)
        card(
            "open transactions",
            f"{open_txns} ({hanging} hanging)",
            "bad" if hanging else ("warn" if open_txns else ""),
        )
        deleted = sum(r.deleted_bytes for r in self.rows)
        card("retention would delete", human_size(deleted), "warn" if deleted else "")
        out.append("</div>")
        if o is not None:
            out.append(
                "<h3>Log directories</h3><table><tr><th>log directory</th><th>broker (node.id)</th><th>partitions</th>"
                "<th>size</th><th>records</th><th>open txns</th><th>problems</th><th>retention would delete</th></tr>"
            )
            by_dir: dict[str, list[_Row]] = {}
            for r in self.rows:
                by_dir.setdefault(os.path.dirname(locations.abspath(r.directory)), []).append(r)
            for d in o.log_dirs:
                rows = by_dir.get(d.path, [])
                problems = sum(r.problems for r in rows)
                hanging = sum(r.hanging for r in rows)
                deleted = sum(r.deleted_bytes for r in rows)
                flag = "bad" if problems or hanging else ""
                out.append(
                    f'<tr class="{flag}"><td><code>{escape(d.path)}</code></td><td>{_e(d.broker_id)}</td>'
                    f"<td>{len(rows):,}</td><td>{human_size(sum(r.size for r in rows))}</td>"
                    f"<td>{sum(r.records for r in rows):,}</td>"
                    f"<td>{sum(r.open_txns for r in rows)}{f' ({hanging} hanging)' if hanging else ''}</td>"
                    f"<td>{problems:,}</td><td>{human_size(deleted) if deleted else '-'}</td></tr>"
                )
            out.append("</table>")
        out.append(_topic_charts(topics, o.now if o else None))
        out.append(_all_partitions_chart(self.rows))
        out.append("</section>\n")
        out.append(self._health())
        return "".join(out)

    def _health(self) -> str:
        o = self.overview
        out = ['<section id="health"><h2>Health (kdump verify)</h2>']
        if o is None:
            return out[0] + "<p>No verify summary.</p></section>"
        v = o.verify
        out.append(
            f"<p>{v.partitions:,} partitions, {v.segments:,} segments, {v.batches:,} batches, "
            f"{human_size(v.log_bytes)} of log, {v.index_files:,} index files ({v.index_entries:,} entries), "
            f"{v.producer_snapshots:,} producer snapshots, {v.checkpoint_values:,} checkpoint values, "
            f"{v.leader_epochs:,} leader epochs, {v.kraft_snapshots:,} KRaft snapshots checked: "
            f'<b class="{"bad" if v.problems else "good" if o.crc_checked else ""}">{v.problems:,} problem(s)</b> in '
            f"{v.files_with_problems:,} file(s). "
            + (
                "Every batch's CRC was checked (--crc); record contents were not decoded (verify without --deep).</p>"
                if o.crc_checked
                else f"{_NO_CRC} Record contents were not decoded.</p>"
            )
        )
        if v.kinds:
            by_kind: dict[str, list[str]] = {}
            for r in self.rows:
                for kind, n in r.kinds.items():
                    by_kind.setdefault(kind, []).append(f"{_link(r)} ({n})")
            out.append(_kinds_chart(v.kinds))
            out.append("<table><tr><th>problem kind</th><th>count</th><th>partitions</th></tr>")
            for kind, n in sorted(v.kinds.items(), key=lambda kv: -kv[1]):
                links = by_kind.get(kind, [])
                shown = ", ".join(links[:20]) + (f", ... {len(links) - 20:,} more" if len(links) > 20 else "")
                out.append(f"<tr><td>{escape(kind)}</td><td>{n:,}</td><td>{shown}</td></tr>")
            out.append("</table>")
            out.append(self._problem_partitions())
        if o.log_dir_findings:
            out.append("<h3>Problems of the log directories' own files</h3><ul>")
            out.extend(f"<li>{_finding_html(f)}</li>" for f in o.log_dir_findings)
            out.append("</ul>")
        out.append("<h3>What could not be checked</h3>")
        if o.unchecked or self.unreadables or not o.crc_checked:
            out.append("<ul>")
            if not o.crc_checked:
                out.append(f"<li>{_NO_CRC}</li>")
            out.extend(
                f"<li><code>{escape(f.path)}</code>: {escape(finding_message(f))}</li>" for f in o.unchecked
            )
            out.extend(f'<li class="bad">{escape(p)}</li>' for p in sentences(self.unreadables))
            out.append("</ul>")
            if o.unchecked_total > len(o.unchecked):
                out.append(f"<p class=note>{o.unchecked_total - len(o.unchecked):,} more not listed.</p>")
        else:
            out.append("<p>Everything found was checked.</p>")
        out.append(
            "<p class=note>Not in this report: record contents. Keys are counted for compacted topics only (by "
            "retention's prediction); compression ratios are measured on at most "
            f"{SAMPLES} compressed batches per partition, decompressed but not decoded (marked "
            "&ldquo;sampled&rdquo; when a partition has more).</p>"
        )
        out.append("</section>\n")
        return "".join(out)

    def _problem_partitions(self) -> str:
        rows = [r for r in self.rows if r.problems]
        if not rows:
            return ""
        rows.sort(key=lambda r: -r.problems)
        items = [f"<li>{_link(r)}: {r.problems:,}</li>" for r in rows[:100]]
        more = f"<li>... {len(rows) - 100:,} more partitions</li>" if len(rows) > 100 else ""
        return "<h3>Partitions with problems</h3><ul class=cols>" + "".join(items) + more + "</ul>"

    def _topics(self) -> str:
        out = ['<section id="topics"><h2>Topics and partitions</h2>']
        out.append(
            "<table class=topics><tr><th>topic</th><th>partitions</th><th>size</th><th>records</th>"
            "<th>oldest</th><th>newest</th><th>open txns</th><th>problems</th><th>retention would delete</th>"
            "<th>compression</th></tr>"
        )
        for t in self._topic_totals():
            flag = "bad" if t.hanging or t.problems else ("warn" if t.open_txns else "")
            out.append(
                f'<tr class="{flag}"><td><a href="#t-{_slug(t.name)}">{escape(t.name)}</a></td><td>{t.partitions:,}</td>'
                f"<td>{human_size(t.size)}</td><td>{t.records:,}</td>{_ts(t.min_ts)}{_ts(t.max_ts)}"
                f"<td>{t.open_txns}{f' ({t.hanging} hanging)' if t.hanging else ''}</td><td>{t.problems:,}</td>"
                f"<td>{human_size(t.deleted_bytes) if t.deleted_bytes else '-'}</td>"
                f"<td>{_ratio(t.sampled_bytes, t.uncompressed_bytes, t.compression_exact)}</td></tr>"
            )
        out.append("</table>")
        for t in self._topic_totals():
            out.append(
                f'<details id="t-{_slug(t.name)}"{" open" if not t.internal and len(t.rows) <= 64 else ""}>'
                f"<summary>{escape(t.name)}: {t.partitions:,} partition(s), {human_size(t.size)}</summary>"
                + _partition_sizes_chart(t)
                + "<table class=rows><tr><th>partition</th><th>segments</th><th>size</th><th>log start</th><th>log end</th>"
                "<th>high watermark</th><th>records</th><th>oldest</th><th>newest</th><th>open txns</th>"
                "<th>problems</th><th>retention would delete</th><th>dirty ratio</th><th>compression</th></tr>"
            )
            for r in t.rows:
                flag = "bad" if r.hanging or r.problems or r.unreadable else ("warn" if r.open_txns else "")
                out.append(
                    f'<tr id="r{r.index}"{f" class={flag}" if flag else ""}><td title="{escape(r.directory)}">{_link(r)}</td><td>{r.segments}</td><td>{human_size(r.size)}</td>'
                    f"<td>{_num(r.log_start)}</td><td>{_num(r.log_end)}</td><td>{_num(r.high_watermark)}</td>"
                    f"<td>{r.records:,}</td><td>{_wbr(r.min_ts)}</td><td>{_wbr(r.max_ts)}</td>"
                    f"<td>{r.open_txns}{f' ({r.hanging} hanging)' if r.hanging else ''}</td><td>{r.problems}</td>"
                    f"<td>{f'{r.deleted_segments} seg, {human_size(r.deleted_bytes)}' if r.deleted_segments else '-'}</td>"
                    f"<td>{'-' if r.dirty_ratio is None else f'{r.dirty_ratio:.3f}'}</td>"
                    f"<td>{_ratio(r.sampled_bytes, r.uncompressed_bytes, r.compression_exact)}</td></tr>"
                )
            out.append("</table></details>")
        out.append("</section>\n")
        return "".join(out)

    def _groups(self) -> str:
        out = ['<section id="groups"><h2>Consumer groups (__consumer_offsets)</h2>']
        if not self.groups:
            out.append(
                "<p>No consumer group in the data directories (no committed offsets in __consumer_offsets).</p>"
            )
        rows_by_name = {(r.topic, r.partition): r for r in self.rows}
        totals = [
            (state.group, sum(x.lag or 0 for x in g.lags.get(state.group, [])))
            for g in self.groups
            for state in g.groups
        ]
        if len(totals) > 1 and any(n for _, n in totals):
            out.append(_groups_lag_chart(totals))
        for g in self.groups:
            out.append(f"<h3>{escape(os.path.basename(g.directory))}</h3>")
            for state in g.groups:
                lags = g.lags.get(state.group, [])
                total = sum(x.lag or 0 for x in lags)
                m = state.metadata or {}
                out.append(
                    f'<div class="group"><h4>group <code>{escape(state.group)}</code>: total lag {total:,}</h4>'
                    f"<p>protocol type {_e(m.get('protocolType'))}, generation {_e(m.get('generation'))}, "
                    f"{len(m.get('members') or [])} member(s); {len(lags)} committed partition(s)"
                    + (
                        f", {state.pending_transactional} offset(s) pending in open transactions"
                        if state.pending_transactional
                        else ""
                    )
                    + "</p>"
                )
                if any(x.lag is not None for x in lags):
                    out.append(_lag_chart(state.group, lags))
                if len(lags) > MAX_TABLE_ROWS:  # thousands of partitions: the table folded, lagging first
                    lags = sorted(lags, key=lambda x: -(x.lag or 0))
                    out.append(
                        f"<details><summary>all {len(lags):,} committed partitions, lagging most first</summary>"
                    )
                out.append(
                    "<table><tr><th>topic</th><th>partition</th><th>committed offset</th><th>log end offset "
                    "(high watermark)</th><th>lag</th><th>committed at</th></tr>"
                )
                for x in lags:
                    row = rows_by_name.get((x.topic, x.partition))
                    name = f"{escape(x.topic)}" if row is None else _link(row, x.topic)
                    out.append(
                        f'<tr class="{"warn" if x.lag else ""}"><td>{name}</td><td>{x.partition}</td><td>{x.offset:,}</td>'
                        f"<td>{_num(x.log_end_offset)}</td><td>{_num(x.lag)}</td>{_ts(x.commit_timestamp)}</tr>"
                    )
                out.append("</table></details></div>" if len(lags) > MAX_TABLE_ROWS else "</table></div>")
            out.extend(f'<p class="bad">problem: {escape(p)}</p>' for p in sentences(g.problems))
            out.append(_json_script(incident.groups_object(g), "reportGroups"))
        out.append("</section>\n")
        return "".join(out)

    def _coordinators(self) -> str:
        out = ['<section id="coordinators"><h2>Transaction coordinator (__transaction_state)</h2>']
        if not self.coordinators:
            out.append("<p>No transactional id in the data directories.</p>")
        else:
            out.append(
                "<table><tr><th>transactional id</th><th>state</th><th>producer id</th><th>epoch</th>"
                "<th>timeout</th><th>partitions</th><th>started</th><th>last update</th><th>coordinator partition</th></tr>"
            )
            for c in self.coordinators:
                for x in c.transactions:
                    cls = "warn" if x.state in ("Ongoing", "PrepareCommit", "PrepareAbort") else ""
                    parts = ", ".join(f"{escape(t)}-{p}" for t, p in x.partitions) or "-"
                    out.append(
                        f'<tr class="{cls}"><td><code>{escape(x.transactional_id)}</code></td><td>{escape(x.state)}</td>'
                        f"<td>{x.producer_id}</td><td>{x.producer_epoch}</td><td>{duration(x.timeout_ms) if x.timeout_ms >= 0 else '-'}</td>"
                        f'<td class="wrap">{parts}</td>{_ts(x.start_timestamp)}{_ts(x.last_update_timestamp)}'
                        f"<td>{escape(os.path.basename(c.directory))}</td></tr>"
                    )
            out.append("</table>")
            for c in self.coordinators:
                out.extend(f'<p class="bad">problem: {escape(p)}</p>' for p in sentences(c.problems))
                out.append(_json_script(incident.coordinator_object(c), "reportCoordinator"))
        out.append("</section>\n")
        return "".join(out)


def _wbr(ms: int | None) -> str:
    """A UTC time that may break after its date in a cell that wraps (``td.ts``; the 8th and 9th columns of a
    topic's table of partitions, which has 14): a table wider than the page is cut on a screen."""
    return iso(ms).replace("T", "T<wbr>", 1)


def _ts(ms: int | None) -> str:
    """A table cell of a UTC time that may break after its date (:func:`_wbr`)."""
    return f"<td class=ts>{_wbr(ms)}</td>"


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else f"_{ord(c):x}" for c in name)


def _link(r: _Row, text: str | None = None) -> str:
    label = escape(text if text is not None else r.name)
    return f'<a href="#{r.anchor}">{label}</a>' if r.anchor else label


def _finding_html(f: Any) -> str:
    where = [] if f.position is None else [f"byte {f.position}"]
    if f.offset is not None:
        where.append(f"offset {f.offset}")
    at = f" ({', '.join(where)})" if where else ""
    return f"<code>{escape(f.path)}</code>{at}: <b>{escape(f.kind)}</b>: {escape(finding_message(f))}"


# --- overview charts -----------------------------------------------------------------------------------------


def _rows_chart(
    title: str,
    x0: float,
    x1: float,
    n: int,
    *,
    row_height: int = 18,
    margin: int = 74,
    left: int = 200,
    **options: Any,
) -> Chart:
    """A chart of ``n`` labelled rows over ``x0..x1`` (row ``i`` at :func:`_row_y`, the first at the top): the
    bar lists (topics, problem kinds, a group's lag) and the timelines by producer."""
    return Chart(title, x0, x1, 0, n, height=margin + row_height * n, left=left, y_ticks=False, **options)


def _row_y(n: int, i: int) -> float:
    """The middle of row ``i`` of ``n`` (the first at the top)."""
    return n - i - 0.5


#: What the header pass (``kdump report`` without ``--crc``) did not check, said in the health summary.
_NO_CRC = (
    "Record CRCs were not checked: the report read the batch headers and the indexes, not the records' bytes (a "
    "damaged record whose batch header is intact is not seen). <code>kdump report --crc</code> or <code>kdump "
    "verify</code> checks every batch's CRC (they read every byte)."
)


def _topic_charts(topics: list[Any], now: int | None) -> str:
    holding = [t for t in topics if t.size]
    shown = sorted(holding, key=lambda t: -t.size)[:MAX_ROWS]
    if not shown:
        return "<p>No partition holds data.</p>"
    of = (
        f" (the {len(shown)} largest of {len(holding)}; every topic is in the table below)"
        if len(shown) < len(holding)
        else ""
    )
    out = []
    scale = size_scale([t.size for t in shown])
    c = _rows_chart(
        "size on disk by topic" + of + scale.note,
        scale.lo,
        scale.hi,
        len(shown),
        x_label="bytes (log scale)" if scale.log else "bytes",
        chart_id="chart-topic-sizes",
        log_x=scale.log,
    )
    for i, t in enumerate(shown):
        y = _row_y(len(shown), i)
        _row_bar(
            c,
            y,
            t.size,
            scale,
            "internal" if t.internal else "size",
            f"{t.name}: {human_size(t.size)} in {t.partitions} partition(s), {t.records:,} records",
            human_size(t.size),
        )
        c.row_label(y, t.name)
    out.append(c.svg())
    timed = [t for t in shown if t.min_ts is not None and t.max_ts is not None]
    if timed:
        lo = min(t.min_ts for t in timed)
        hi = max(t.max_ts for t in timed)
        if now is not None and lo <= now <= hi + (hi - lo) * 0.25:
            hi = max(hi, now)
        c = _rows_chart(
            "time covered by each topic (batch max-timestamps)" + of,
            lo,
            hi,
            len(timed),
            time_x=True,
            x_label="UTC",
            chart_id="chart-topic-times",
        )
        for i, t in enumerate(timed):
            y = _row_y(len(timed), i)
            c.bar(
                t.min_ts,
                t.max_ts,
                y - 0.35,
                y + 0.35,
                "internal" if t.internal else "span",
                f"{t.name}: {iso(t.min_ts)} to {iso(t.max_ts)}",
            )
            # the newest batch as a dot too: a topic written over a few seconds is no visible bar
            c.dots([(t.max_ts, y, f"{t.name}: newest batch {iso(t.max_ts)}")], "span-end", r=3)
            c.row_label(y, t.name)
        if now is not None and lo <= now <= hi:
            c.vline(now, "now", f"now (the report's reference time) {iso(now)}", "now")
        out.append(c.svg())
    return "".join(out)


def _row_bar(c: Chart, y: float, value: float, scale: SizeScale, cls: str, title: str, figure: str) -> None:
    """A bar of a rows chart on ``scale``: past its end, cut there with a break and its figure written on it."""
    if scale.log or value <= scale.hi:
        c.bar(scale.lo, value, y - 0.35, y + 0.35, cls, title)
        return
    c.bar(0, scale.hi, y - 0.35, y + 0.35, cls, title)
    c.cut(scale.hi * 0.88, y - 0.35, y + 0.35)
    times = value / scale.hi
    c.text(scale.hi * 0.01, y - 0.2, f"{figure}, {_times(times)} the scale: the bar is cut", "in-bar")


def _times(x: float) -> str:
    return f"{x:,.1f} times" if x < 10 else f"{x:,.0f} times"


def _column_top(scale: SizeScale) -> float:
    """The top of a strip's value axis: a tenth above its largest bar, or, when bars are cut, a quarter above the
    others' largest: the cut bars go on through that band, where the words of a single one are written, clear
    of the others."""
    return scale.hi * (1.25 if scale.cut else 1.1)


def _column(
    c: Chart,
    x0: float,
    x1: float,
    rows: list[_Row],
    scale: SizeScale,
    what: str,
    cuts: list[tuple[_Row, float]],
) -> None:
    """One column of a strip of partitions on ``scale`` (:func:`_bin_bar`); one past the scale's end goes to the
    top of the plot with a break, and its largest partition joins ``cuts`` (with the column's right end)."""
    top = max(r.size for r in rows)
    if scale.log or top <= scale.hi:
        _bin_bar(c, x0, x1, rows, what, scale.lo)
        return
    _bin_bar(c, x0, x1, rows, what, scale.lo, c.y1)
    c.cut_column(x0, x1, scale.hi * 1.12)
    cuts.append((max(rows, key=lambda r: r.size), x1))


def _cut_words(c: Chart, cuts: list[tuple[_Row, float]], scale: SizeScale) -> str:
    """What the cut columns are: a single one's partition, size and how many times the scale it is written beside
    it in the chart; all of them (at most :data:`kdump.render.svg.MAX_CUT`) in a line under the chart, each a
    link to its partition."""
    if not cuts:
        return ""

    def words(r: _Row) -> str:
        return f"{human_size(r.size)}, {_times(r.size / scale.hi)} the scale"

    if len(cuts) == 1:
        r, x1 = cuts[0]
        c.note(c.x(x1) + 4, 0, f"{r.name}: {words(r)} (cut)")
    return (
        f'<p class="legend">Cut at the end of the scale the other bars set (more than {OUTLIER} times the median bar): '
        + "; ".join(
            f'<a href="{r.href}">{escape(r.name)}</a>: {words(r)}'
            for r, _ in sorted(cuts, key=lambda rx: -rx[0].size)
        )
        + ".</p>"
    )


#: Bars a chart of partitions draws at most: more partitions are binned, each bar the largest of its bin.
MAX_BARS = 400


def _bins(rows: list[_Row], n: int = MAX_BARS) -> list[list[_Row]]:
    """``rows`` in order, cut into at most ``n`` runs of equal length (the last shorter)."""
    per = max(1, -(-len(rows) // n))
    return [rows[i : i + per] for i in range(0, len(rows), per)]


def _bin_bar(
    c: Chart, x0: float, x1: float, rows: list[_Row], what: str, floor: float = 0, height: float | None = None
) -> None:
    """One bar for a bin of partitions: its largest, coloured as a problem when any of them has one, linked to
    the largest one's details."""
    top = max(rows, key=lambda r: r.size)
    problems = sum(1 for r in rows if r.problems)
    if len(rows) == 1:
        title = f"{top.name}: {human_size(top.size)}, {top.records:,} records, {top.problems} problem(s)"
    else:
        low = min(r.size for r in rows)
        title = (
            f"{len(rows)} partitions ({what}): {human_size(low)} to {human_size(top.size)}, largest {top.name}; "
            f"{problems} with problems"
        )
    c.bar(
        x0,
        x1,
        floor,
        top.size if height is None else height,
        "problem" if problems else "size",
        title,
        href=top.href,
        min_width=1.0,
    )


def _number(r: _Row) -> int:
    return -1 if r.partition is None else r.partition


def _partition_sizes_chart(t: Any) -> str:
    """A topic's partitions side by side, by partition number (size, records on hover, a link to each): skew
    at a glance; more than :data:`MAX_BARS` are binned (each bar the largest of its bin)."""
    rows = sorted((r for r in t.rows if r.partition is not None), key=_number)
    if len(rows) < 2 or not any(r.size for r in rows):
        return ""
    bins = _bins(rows)
    per = len(bins[0])
    scale = size_scale([max(r.size for r in b) for b in bins])
    c = Chart(
        f"{t.name}: size of each partition"
        + (f" (each bar: {per} partitions, the largest)" if per > 1 else "")
        + scale.note,
        _number(rows[0]) - 0.5,
        _number(rows[-1]) + 0.5,
        scale.lo,
        _column_top(scale),
        height=150,
        x_label="partition",
        y_label="bytes",
        chart_id=f"chart-partitions-{_slug(t.name)}",
        log_y=scale.log,
        integer_x=True,
    )
    cuts: list[tuple[_Row, float]] = []
    for b in bins:
        lo, hi = _number(b[0]), _number(b[-1])
        gap = 0.1 * (hi - lo + 1)
        _column(c, lo - 0.5 + gap, hi + 0.5 - gap, b, scale, f"{lo} to {hi}", cuts)
    words = _cut_words(c, cuts, scale)
    return c.svg() + words


def _all_partitions_chart(rows: list[_Row]) -> str:
    """Every partition of the report sorted by size, largest first, as one strip (binned past
    :data:`MAX_BARS`): how the bytes spread over thousands of partitions, the outliers with problems in red,
    each bar a link to its partition."""
    holding = sorted((r for r in rows if r.size), key=lambda r: -r.size)
    if len(holding) < 2:
        return ""
    bins = _bins(holding)
    per = len(bins[0])
    scale = size_scale([b[0].size for b in bins])
    c = Chart(
        f"all {len(holding):,} partitions holding data, by size, largest first"
        + (f" (each bar: {per} partitions, the largest)" if per > 1 else "")
        + scale.note,
        0.5,
        len(holding) + 0.5,
        scale.lo,
        _column_top(scale),
        height=180,
        x_label="rank by size",
        y_label="bytes",
        chart_id="chart-all-partitions",
        log_y=scale.log,
        integer_x=True,
    )
    cuts: list[tuple[_Row, float]] = []
    for i, b in enumerate(bins):
        lo, hi = i * per + 1, i * per + len(b)
        gap = 0.1 * len(b)
        _column(c, lo - 0.5 + gap, hi + 0.5 - gap, b, scale, f"ranks {lo:,} to {hi:,}", cuts)
    largest = "".join(
        f"<li>{_link(r)}: {human_size(r.size)}{f', {r.problems} problem(s)' if r.problems else ''}</li>"
        for r in holding[:10]
    )
    words = _cut_words(c, cuts, scale)
    return c.svg() + words + f"<p>The largest:</p><ol class=cols>{largest}</ol>"


def _kinds_chart(kinds: dict[str, int]) -> str:
    items = sorted(kinds.items(), key=lambda kv: -kv[1])[:MAX_ROWS]
    scale = size_scale([n for _, n in items])
    c = _rows_chart(
        "verify's problems by kind" + scale.note,
        scale.lo,
        scale.hi,
        len(items),
        x_label="problems (log scale)" if scale.log else "problems",
        chart_id="chart-problem-kinds",
        log_x=scale.log,
    )
    for i, (kind, n) in enumerate(items):
        y = _row_y(len(items), i)
        _row_bar(c, y, n, scale, "problem", f"{kind}: {n}", f"{n:,}")
        c.row_label(y, kind)
    return c.svg()


#: The others' summed bar of a lag chart is cut when it exceeds the largest bar shown this many times: drawn to
#: scale, it would squash the bars shown into a few pixels.
REST_CUT = 1.5


def _lag_scale(shown_max: int, rest: int) -> tuple[int, bool]:
    """The end of a lag chart's scale over the bars ``shown`` (the largest ``shown_max``) and the others summed
    (``rest``), and whether the others' bar is cut there (:data:`REST_CUT`)."""
    shown_max = max(shown_max, 1)
    if rest > REST_CUT * shown_max:
        return shown_max, True
    return max(shown_max, rest), False


def _rest_bar(c: Chart, y: float, rest: int, top: int, cut: bool, title: str, label: str) -> None:
    """The others' summed bar of a lag chart at row ``y``: to scale, or (``cut``) drawn to the end of the scale
    with a break and its sum written on it."""
    c.bar(0, min(rest, top) if cut else rest, y - 0.35, y + 0.35, "rest", title)
    if cut:
        c.cut(top * 0.88, y - 0.35, y + 0.35)
        times = rest / top
        c.text(
            top * 0.01,
            y - 0.2,
            f"{rest:,} in all, {times:,.1f} times the scale: the bar is cut"
            if times < 10
            else f"{rest:,} in all, {times:,.0f} times the scale: the bar is cut",
            "in-bar",
        )
    c.row_label(y, label)


def _lag_chart(group: str, lags: list[Any]) -> str:
    """A group's partitions by lag: each one's committed offset and lag against its log end offset when they fit
    (at most :data:`MAX_ROWS`); past that the :data:`MAX_ROWS` - 1 lagging most, then the others summed in one
    bar (their lags added: offsets of different partitions do not add up, lags do)."""
    known = sorted((x for x in lags if x.lag is not None), key=lambda x: -(x.lag or 0))
    if len(known) <= MAX_ROWS:
        shown, rest = known, []
    else:
        shown, rest = known[: MAX_ROWS - 1], known[MAX_ROWS - 1 :]
    rows = len(shown) + (1 if rest else 0)
    if rest:
        rest_lag = sum(x.lag or 0 for x in rest)
        top, cut = _lag_scale(max((x.lag or 0) for x in shown), rest_lag)
        c = _rows_chart(
            f"group {group}: lag of the {len(shown)} partitions lagging most, and of the other {len(rest):,} summed"
            + (" (their bar is cut)" if cut else ""),
            0,
            top,
            rows,
            x_label="lag (records)",
        )
        for i, x in enumerate(shown):
            y = _row_y(rows, i)
            name = f"{x.topic}-{x.partition}"
            c.bar(0, x.lag or 0, y - 0.35, y + 0.35, "lag", f"{name}: lag {x.lag:,} (committed {x.offset:,})")
            c.row_label(y, name)
        _rest_bar(
            c,
            _row_y(rows, rows - 1),
            rest_lag,
            top,
            cut,
            f"{len(rest):,} other partitions: lag {rest_lag:,} in all",
            f"{len(rest):,} others (sum)",
        )
        return c.svg()
    top = max(max((x.log_end_offset or 0) for x in shown), 1)
    c = _rows_chart(
        f"group {group}: committed offset (blue) and lag (orange) against the log end offset",
        0,
        top,
        len(shown),
        x_label="offset",
    )
    for i, x in enumerate(shown):
        y = _row_y(len(shown), i)
        name = f"{x.topic}-{x.partition}"
        c.bar(0, x.offset, y - 0.35, y + 0.35, "committed", f"{name}: committed {x.offset:,}")
        if x.lag:
            c.bar(
                x.offset,
                x.log_end_offset or x.offset,
                y - 0.35,
                y + 0.35,
                "lag",
                f"{name}: lag {x.lag:,} (log end offset {x.log_end_offset:,})",
            )
        c.row_label(y, name)
    return c.svg()


def _groups_lag_chart(totals: list[tuple[str, int]]) -> str:
    """Every group's total lag: the :data:`MAX_ROWS` - 1 lagging most, the others summed in one bar."""
    ranked = sorted(totals, key=lambda t: -t[1])
    shown, rest = (
        (ranked, []) if len(ranked) <= MAX_ROWS else (ranked[: MAX_ROWS - 1], ranked[MAX_ROWS - 1 :])
    )
    rows = len(shown) + (1 if rest else 0)
    rest_lag = sum(n for _, n in rest)
    top, cut = _lag_scale(max((n for _, n in shown), default=0), rest_lag)
    c = _rows_chart(
        f"total lag of the {len(ranked):,} groups"
        + (f" (the {len(shown)} lagging most, the other {len(rest):,} summed)" if rest else "")
        + (" (the others' bar is cut)" if cut else ""),
        0,
        top,
        rows,
        x_label="lag (records)",
        chart_id="chart-groups-lag",
    )
    for i, (group, n) in enumerate(shown):
        y = _row_y(rows, i)
        c.bar(0, n, y - 0.35, y + 0.35, "lag", f"group {group}: lag {n:,}")
        c.row_label(y, group)
    if rest:
        _rest_bar(
            c,
            _row_y(rows, rows - 1),
            rest_lag,
            top,
            cut,
            f"{len(rest):,} other groups: lag {rest_lag:,} in all",
            f"{len(rest):,} others (sum)",
        )
    return c.svg()


# --- a partition ---------------------------------------------------------------------------------------------


def _interpolate(buckets: list[Any], offset: int) -> int | None:
    """The time of ``offset`` read off the timeline (linear between the buckets around it)."""
    pts = [(b.last_offset, b.max_timestamp) for b in buckets if b.max_timestamp >= 0]
    if not pts:
        return None
    prev = None
    for o, t in pts:
        if offset <= o:
            if prev is None or o == prev[0]:
                return t
            po, pt = prev
            return int(pt + (t - pt) * (offset - po) / (o - po))
        prev = (o, t)
    return pts[-1][1]


def _partition_section(r: PartitionReport, row: _Row) -> str:
    s = r.summary
    out = [
        f'<section class="partition" id="{row.anchor}"><h3>{escape(row.name)} <small><code>{escape(s.directory)}</code></small></h3>'
        + _WHY_SLOT
    ]
    out.append(
        '<dl class="facts">'
        f"<dt>segments</dt><dd>{s.segments:,} ({human_size(s.size_bytes)})</dd>"
        f"<dt>offsets</dt><dd>log start {_num(s.log_start_offset)}, log end {_num(s.log_end_offset)}, "
        f"high watermark {_num(s.high_watermark)}, recovery point {_num(s.recovery_point)}</dd>"
        f"<dt>records</dt><dd>{s.records:,} in {s.batches:,} batches ({', '.join(s.codecs) or '-'})</dd>"
        f"<dt>time range</dt><dd>{iso(s.min_timestamp)} &rarr; {iso(s.max_timestamp)}</dd>"
        + _compression_fact(r)
        + f"<dt>producers</dt><dd>{len(s.producers):,}{(' (ids ' + ', '.join(map(str, s.producers[:12])) + (' ...' if len(s.producers) > 12 else '') + ')') if s.producers else ''}</dd>"
        "</dl>"
    )
    if s.anomalies:
        # ls's findings: the first few in sight, the others folded (a compacted partition can leave dozens of
        # .deleted files behind a stopped broker), at most 50 (kdump ls lists them all)
        said = [f'<li class="warn">{escape(a)}</li>' for a in sentences(s.anomalies[:50])]
        out.append("<ul>" + "".join(said[:3]) + "</ul>")
        if len(said) > 3:
            more = len(s.anomalies) - 3
            out.append(
                f"<details><summary>{more:,} more finding(s) of <code>kdump ls</code></summary><ul>"
                + "".join(said[3:])
                + (f"<li>... and {len(s.anomalies) - 50:,} more</li>" if len(s.anomalies) > 50 else "")
                + "</ul></details>"
            )
    out.append(_offsets_chart(r, row))
    out.append(_rate_chart(r, row))
    out.append(_batch_chart(r, row))
    out.append(_segments_chart(r, row))
    out.append(_txn_chart(r, row))
    out.append(_producers_chart(r, row))
    out.append(_partition_tables(r))
    out.append(_json_script(incident.partition_object(r), "reportPartition"))
    out.append("</section>\n")
    return "".join(out)


def _ratio(sampled: int, uncompressed: int, exact: bool) -> str:
    """A compression ratio for a table cell: uncompressed over compressed bytes of the batches sampled."""
    if not sampled:
        return "-"
    return f"{uncompressed / sampled:.2f}&times;" + ("" if exact else " <small>(sampled)</small>")


def _compression_fact(r: PartitionReport) -> str:
    c = r.compression
    if c is None:
        return ""
    if c.ratio is None:
        return f"<dt>compression</dt><dd>no compressed batch could be decompressed ({c.failed:,} tried)</dd>"
    how = (
        f"every one of the {c.compressed_batches:,} compressed batches decompressed"
        if c.exact
        else f"sampled: {c.sampled_batches:,} of {c.compressed_batches:,} compressed batches "
        f"({human_size(c.sampled_bytes)} of {human_size(c.compressed_bytes)}) decompressed, spread through the log"
    )
    failed = f"; {c.failed:,} could not be decompressed" if c.failed else ""
    return f"<dt>compression</dt><dd>ratio {c.ratio:.2f}&times; ({how}{failed})</dd>"


def _time_range(r: PartitionReport) -> tuple[int, int] | None:
    times = [b.min_timestamp for b in r.timeline.buckets if b.min_timestamp >= 0]
    times += [b.max_timestamp for b in r.timeline.buckets if b.max_timestamp >= 0]
    if not times:
        return None
    return min(times), max(times)


def _offsets_chart(r: PartitionReport, row: _Row) -> str:
    t = r.timeline
    span = _time_range(r)
    if span is None:
        return '<p class="note">No batch has a timestamp: no timeline.</p>'
    lo, hi = span
    first = t.buckets[0].first_offset
    last = t.buckets[-1].last_offset + 1
    c = Chart(
        "offsets against time (each point: the last offset of a run of batches at its newest timestamp)",
        lo,
        hi,
        first,
        last,
        time_x=True,
        x_label="UTC",
        y_label="offset",
        height=280,
        chart_id=f"chart-offsets-{row.anchor}",
    )
    ret = r.retention
    if ret is not None and ret.deleted:
        end = max(x.largest_timestamp for x in ret.deleted)
        last_deleted = ret.deleted[-1]
        c.band(
            lo,
            end,
            "deleted",
            f"retention would delete {len(ret.deleted)} segment(s) up to offset {last_deleted.next_offset:,} "
            f"({', '.join(sorted({x.deleted_by or '' for x in ret.deleted}))}) at {iso(ret.now)}: a prediction",
            "retention would delete",
        )
    span_ms = max(hi - lo, 1)
    for g in t.silences:
        if g.duration * 20 >= span_ms:
            c.band(
                g.start,
                g.end,
                "silence",
                f"no batch for {duration(g.duration)}: {iso(g.start)} to {iso(g.end)} "
                f"(after offset {g.after_offset:,}, next {g.before_offset:,})",
                f"no records for {duration(g.duration)}",
                # the line runs flat through the silence: its words go where the line is not
                low=g.after_offset - first > 0.4 * (last - first),
            )
    for seg in t.segments:
        if seg.first_timestamp >= 0 and seg.base_offset != first:
            c.vline(
                seg.first_timestamp,
                "segment",
                f"segment {seg.base_offset:,}: first batch {iso(seg.first_timestamp)}, {human_size(seg.bytes)}",
            )
    for e in (
        t.epoch_changes[1:] if t.epoch_changes and t.epoch_changes[0].offset == first else t.epoch_changes
    ):
        if e.timestamp >= 0:
            c.vline(
                e.timestamp,
                "epoch",
                f"leader epoch {e.epoch} from offset {e.offset:,} ({iso(e.timestamp)})",
                f"epoch {e.epoch}",
            )
    points = [(float(t.buckets[0].min_timestamp), float(first))] if t.buckets[0].min_timestamp >= 0 else []
    points += [(float(b.max_timestamp), float(b.last_offset + 1)) for b in t.buckets if b.max_timestamp >= 0]
    c.polyline(points, "offsets", f"{row.name}: offsets {first:,} to {last:,}")
    c.dots(
        [
            (
                b.max_timestamp,
                b.last_offset + 1,
                f"offsets {b.first_offset:,}-{b.last_offset:,}: {b.records:,} records in {b.batches:,} batches, "
                f"newest {iso(b.max_timestamp)}",
            )
            for b in t.buckets
            if b.max_timestamp >= 0
        ],
        "offset-dot",
        r=1.6,
    )
    txn = r.txn
    if txn is not None and txn.open and txn.last_stable_offset is not None:
        c.hline(
            txn.last_stable_offset,
            "lso",
            f"last stable offset {txn.last_stable_offset:,}: read_committed consumers stop here",
            f"last stable offset {txn.last_stable_offset:,}",
        )
    legend = (
        '<p class="legend"><span class="k offsets"></span>offsets <span class="k segment"></span>segment start '
        '<span class="k epoch"></span>leader epoch change <span class="k deleted"></span>retention would delete '
        '(prediction) <span class="k silence"></span>no records <span class="k lso"></span>last stable offset</p>'
    )
    return c.svg() + legend


def _rate_chart(r: PartitionReport, row: _Row) -> str:
    span = _time_range(r)
    if span is None:
        return ""
    lo, hi = span
    if hi <= lo:
        return f'<p class="note">Every batch has the same timestamp ({iso(lo)}): no rate.</p>'
    bins = 80
    width = (hi - lo) / bins
    counts = [0.0] * bins
    previous = lo
    for b in r.timeline.buckets:
        if b.max_timestamp < 0:
            continue
        start = max(
            min(b.min_timestamp if b.min_timestamp >= 0 else b.max_timestamp, b.max_timestamp), previous
        )
        end = b.max_timestamp
        if end < start:
            start = end
        previous = max(previous, b.max_timestamp)
        first, last = int((start - lo) / width), int((end - lo) / width)
        first, last = min(max(first, 0), bins - 1), min(max(last, 0), bins - 1)
        share = b.records / (last - first + 1)
        for i in range(first, last + 1):
            counts[i] += share
    rates = [n / (width / 1000) for n in counts]
    c = Chart(
        f"records per second (bins of {duration(int(width)) if width >= 1 else f'{width:.2g} ms'})",
        lo,
        hi,
        0,
        max(rates) * 1.1 or 1,
        time_x=True,
        x_label="UTC",
        y_label="records/s",
        height=170,
        chart_id=f"chart-rate-{row.anchor}",
    )
    for i, rate in enumerate(rates):
        if rate > 0:
            a = lo + i * width
            c.bar(
                a,
                a + width,
                0,
                rate,
                "rate",
                f"{iso(int(a))}: {rate:.3g} records/s ({counts[i]:.0f} records)",
            )
    if not c.marks:
        return ""
    return c.svg()


def _batch_chart(r: PartitionReport, row: _Row) -> str:
    bs = r.timeline.buckets
    first, last = bs[0].first_offset, bs[-1].last_offset + 1
    top = max(b.max_batch_bytes for b in bs)
    c = Chart(
        "batch size in bytes (bar: mean of a run of batches; dot: the largest)",
        first,
        last,
        0,
        top * 1.1,
        x_label="offset",
        y_label="bytes",
        height=170,
        chart_id=f"chart-batches-{row.anchor}",
    )
    for b in bs:
        mean = b.bytes / b.batches
        c.bar(
            b.first_offset,
            b.last_offset + 1,
            0,
            mean,
            "batch",
            f"offsets {b.first_offset:,}-{b.last_offset:,}: {b.batches:,} batches, mean {mean:,.0f} B, "
            f"{b.records / b.batches:,.1f} records a batch",
        )
    c.dots(
        [
            (
                b.first_offset + (b.last_offset + 1 - b.first_offset) / 2,
                b.max_batch_bytes,
                f"largest batch {b.max_batch_bytes:,} B",
            )
            for b in bs
        ],
        "batch-max",
        r=1.8,
    )
    return c.svg()


_FATE = {"time": "deleted", "size": "deleted", "log-start-offset": "deleted"}


def _segments_chart(r: PartitionReport, row: _Row) -> str:
    t = r.timeline
    s = r.summary
    ret = r.retention
    if not t.segments:
        return ""
    first = min(x.base_offset for x in t.segments)
    last = max(s.log_end_offset or 0, max(x.base_offset for x in t.segments) + 1)
    rows = 2 + (1 if t.epoch_changes or r.epoch_checkpoint else 0)
    c = Chart(
        "segments (retention's prediction), leader epochs (batches; checkpoint marks)",
        first,
        last,
        0,
        rows,
        x_label="offset",
        y_ticks=False,
        height=60 + 28 * rows,
        left=160,
        chart_id=f"chart-segments-{row.anchor}",
    )
    y = rows - 0.5
    fates = {x.base_offset: x for x in ret.segments} if ret is not None else {}
    spans = t.segments
    for i, seg in enumerate(spans):
        nxt = spans[i + 1].base_offset if i + 1 < len(spans) else last
        fate = fates.get(seg.base_offset)
        if fate is not None and fate.deleted_by:
            cls, what = "deleted", f"retention would delete it ({fate.deleted_by})"
        elif fate is not None and fate.deletable_at is not None:
            cls, what = f"seg{i % 2}", f"kept; deletable at {iso(fate.deletable_at)}"
        else:
            cls, what = f"seg{i % 2}", "kept"
        c.bar(
            seg.base_offset,
            nxt,
            y - 0.35,
            y + 0.35,
            cls,
            f"segment {seg.base_offset:,}-{nxt - 1:,}: {human_size(seg.bytes)}, batches {iso(seg.first_timestamp)} "
            f"to {iso(seg.largest_timestamp)}; {what}",
        )
    c.row_label(y, "segments")
    y -= 1
    if s.log_start_offset is not None and ret is not None:
        after = ret.log_start_offset_after
        c.bar(
            first,
            s.log_start_offset,
            y - 0.3,
            y + 0.3,
            "gone",
            f"below the log start offset {s.log_start_offset:,}",
        )
        c.bar(
            s.log_start_offset,
            last,
            y - 0.3,
            y + 0.3,
            "live",
            f"log start {s.log_start_offset:,}; after retention {_num(after)}; log end {_num(s.log_end_offset)}",
        )
        if after is not None and after != s.log_start_offset:
            c.bar(
                s.log_start_offset,
                after,
                y - 0.3,
                y + 0.3,
                "deleted",
                f"retention would move the log start offset to {after:,}",
            )
        c.row_label(y, "log start (now, after)")
    else:
        c.bar(first, last, y - 0.3, y + 0.3, "live", f"offsets {first:,} to {last:,}")
        c.row_label(y, "offsets")
    y -= 1
    if rows == 3:
        changes = t.epoch_changes
        for i, e in enumerate(changes):
            end = changes[i + 1].offset if i + 1 < len(changes) else last
            c.bar(
                e.offset,
                end,
                y - 0.3,
                y + 0.3,
                f"ep{e.epoch % 4 if e.epoch >= 0 else 'x'}",
                f"leader epoch {e.epoch}: offsets {e.offset:,} to {end - 1:,} (batch headers)",
            )
            if c.x(end) - c.x(e.offset) > 40:
                c.text(e.offset + (end - e.offset) / 2, y - 0.1, f"epoch {e.epoch}", "in-bar", "middle")
        for entry in r.epoch_checkpoint or ():
            if first <= entry.start_offset <= last:
                c.dots(
                    [
                        (
                            entry.start_offset,
                            y + 0.42,
                            f"leader-epoch-checkpoint: epoch {entry.epoch} from {entry.start_offset:,}",
                        )
                    ],
                    "checkpoint",
                    r=3,
                )
        c.row_label(y, "leader epochs")
    return c.svg()


def _txn_chart(r: PartitionReport, row: _Row) -> str:
    txn = r.txn
    if txn is None or not (txn.open or txn.aborted):
        return ""
    bs = r.timeline.buckets
    producers = sorted({x.producer_id for x in txn.aborted} | {o.producer_id for o in txn.open})[:MAX_ROWS]
    span = _time_range(r)
    if span is None:
        return ""
    lo, hi = span
    reference = txn.now if txn.now is not None else txn.newest_timestamp
    # the axis runs to the reference time unless that is far past the batches (a report made hours later): then
    # it ends a little after the newest batch, so the aborted ranges keep their width, and an open transaction's
    # bar goes to the edge with its age written on it
    far = reference is not None and reference - hi > 3 * max(hi - lo, 1)
    if reference is not None:
        hi = hi + max((hi - lo) // 20, 1) if far else max(hi, reference)
    n = len(producers)
    c = _rows_chart(
        "transactions by producer: aborted (red), open (orange), hanging (dark red)"
        + (" (up to the newest batch)" if far else ""),
        lo,
        hi,
        n,
        row_height=24,
        margin=70,
        left=160,
        time_x=True,
        x_label="UTC",
        chart_id=f"chart-txn-{row.anchor}",
    )
    for i, pid in enumerate(producers):
        y = _row_y(n, i)
        for a in txn.aborted:
            if a.producer_id != pid:
                continue
            ta, tb = _interpolate(bs, a.first_offset), _interpolate(bs, a.last_offset)
            if ta is None or tb is None:
                continue
            c.bar(
                ta,
                max(tb, ta),
                y - 0.3,
                y + 0.3,
                "aborted",
                f"aborted: offsets {a.first_offset:,}-{a.last_offset:,} (producer {pid}); about {iso(ta)}",
            )
        for o in txn.open:
            if o.producer_id != pid:
                continue
            start = o.first_timestamp if o.first_timestamp is not None else o.last_timestamp
            end = reference if reference is not None else o.last_timestamp
            tid = o.coordinator.transactional_id if o.coordinator is not None else "?"
            c.bar(
                start,
                max(end, start),
                y - 0.34,
                y + 0.34,
                "hanging" if o.hanging else "open",
                f"{'HANGING' if o.hanging else 'open'} since {iso(start)} ({duration(o.age_ms)}): producer {pid} epoch "
                f"{o.producer_epoch}, offsets {o.first_offset:,}-{o.last_offset:,}, transactional id {tid}; {txn_render.reason(o)}",
            )
            if far:  # its end is past the edge: how long it has been open there
                words = (
                    f"{'hanging' if o.hanging else 'open'} {duration(o.age_ms)} at {iso(reference)} \u2192"
                )
                c.text(hi, y - 0.2, words, "cut-label", "end")
        c.row_label(y, f"producer {pid}")
    if reference is not None and not far:
        c.vline(
            reference,
            "now",
            f"reference time {iso(reference)} ({'--now' if txn.now is not None else 'newest record'})",
        )
    if not c.marks:
        return ""
    return c.svg() + (
        '<p class="legend">Aborted ranges are the .txnindex entries (offsets), placed in time by the timeline; '
        "an open transaction runs from its first batch to the reference time "
        f"({'--now' if txn.now is not None else 'the newest record'}"
        f"{', past the right edge: its age there is written on its bar' if far else ''}).</p>"
    )


def _busiest_producers(r: PartitionReport) -> list[Any]:
    return sorted(r.timeline.producers.values(), key=lambda p: (-p.records, p.producer_id))[:MAX_ROWS]


def _producers_chart(r: PartitionReport, row: _Row) -> str:
    shown = [p for p in _busiest_producers(r) if p.first_timestamp >= 0]
    span = _time_range(r)
    if not shown or span is None:
        return ""
    lo, hi = span
    n = len(shown)
    c = _rows_chart(
        "producers: first to last batch of each producer id (the busiest)",
        lo,
        hi,
        n,
        row_height=22,
        margin=70,
        left=160,
        time_x=True,
        x_label="UTC",
        chart_id=f"chart-producers-{row.anchor}",
    )
    for i, p in enumerate(shown):
        y = _row_y(n, i)
        c.bar(
            p.first_timestamp,
            max(p.last_timestamp, p.first_timestamp),
            y - 0.3,
            y + 0.3,
            "txn-producer" if p.transactional else "producer",
            f"producer {p.producer_id} epoch {p.epoch}: {p.records:,} records in {p.batches:,} batches, offsets "
            f"{p.first_offset:,}-{p.last_offset:,}, {iso(p.first_timestamp)} to {iso(p.last_timestamp)}"
            + (f", transactional, {p.markers} markers" if p.transactional or p.markers else ""),
        )
        c.row_label(y, f"producer {p.producer_id}")
    return c.svg()


def _partition_tables(r: PartitionReport) -> str:
    out = []
    producers = _busiest_producers(r)
    if producers:
        t = r.timeline
        out.append(
            "<h4>Producers</h4><table><tr><th>producer id</th><th>epoch</th><th>records</th><th>batches</th>"
            "<th>offsets</th><th>first batch</th><th>last batch</th><th>transactional</th><th>markers</th></tr>"
        )
        out.extend(
            f"<tr><td>{p.producer_id}</td><td>{p.epoch}</td><td>{p.records:,}</td><td>{p.batches:,}</td>"
            f"<td>{p.first_offset:,}-{p.last_offset:,}</td>{_ts(p.first_timestamp)}"
            f"{_ts(p.last_timestamp)}<td>{'yes' if p.transactional else 'no'}</td><td>{p.markers}</td></tr>"
            for p in producers
        )
        out.append("</table>")
        hidden = len(t.producers) - len(producers) + t.producers_over
        if hidden:
            out.append(f"<p class=note>{hidden:,} more producer ids not listed.</p>")
    txn = r.txn
    if txn is not None:
        out.append(
            f"<h4>Transactions</h4><p>last stable offset {_num(txn.last_stable_offset)} (first unstable offset "
            f"{_num(txn.first_unstable_offset)}, high watermark {_num(txn.high_watermark)}); {txn.stats.commits} commits, "
            f"{txn.stats.aborts} aborts; {len(txn.aborted)} aborted ranges in the .txnindex files.</p>"
        )
        if txn.open:
            out.append(
                "<table><tr><th>producer id</th><th>epoch</th><th>offsets</th><th>since</th><th>age</th>"
                "<th>transactional id</th><th>coordinator</th><th>hanging</th></tr>"
            )
            for o in txn.open:
                out.append(
                    f'<tr class="{"bad" if o.hanging else "warn"}"><td>{o.producer_id}</td><td>{o.producer_epoch}</td>'
                    f"<td>{o.first_offset:,}-{o.last_offset:,}</td>{_ts(o.first_timestamp)}<td>{duration(o.age_ms)}</td>"
                    f"<td>{_e(o.coordinator.transactional_id if o.coordinator else None)}</td>"
                    f"<td>{_e(o.coordinator.state if o.coordinator else None)}</td><td>{'yes' if o.hanging else 'no'}: {escape(txn_render.reason(o))}</td></tr>"
                )
            out.append("</table>")
            out.extend(f"<pre>{escape(txn_render.abort_command(o.abort))}</pre>" for o in txn.open if o.abort)
    ret = r.retention
    if ret is not None:
        out.append(
            f"<h4>Retention (a prediction at {iso(ret.now)})</h4><p>cleanup.policy={escape(ret.config.get('cleanup.policy', '-'))}, "
            f"retention.ms={escape(ret.config.get('retention.ms', '-'))}, retention.bytes={escape(ret.config.get('retention.bytes', '-'))}: "
            f"{len(ret.deleted)} of {len(ret.segments)} segment(s) would be deleted, log start offset "
            f"{_num(ret.log_start_offset)} &rarr; {_num(ret.log_start_offset_after)}.</p>"
        )
        # a compacted topic: kdump retention's own words (dirty ratio, keys, tombstones, a cleaning now)
        notes = retention_render.compaction_notes(ret, human=True)
        if notes:
            out.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>")
        out.extend(f'<p class="note">{escape(p)}</p>' for p in sentences(ret.problems))
    if r.quorum_state is not None or r.kraft_snapshots:
        q = r.quorum_state
        out.append("<h4>KRaft metadata log</h4>")
        if q is not None:
            voters = "-" if q.current_voters is None else ", ".join(map(str, q.current_voters))
            out.append(
                f"<p>quorum-state: leader {q.leader_id}, leader epoch {q.leader_epoch}, voted for {q.voted_id}, "
                f"voters {escape(voters)}; the leader changes of the log are its leader-epoch changes below.</p>"
            )
        if r.kraft_snapshots:
            shown = r.kraft_snapshots[-20:]
            out.append("<table><tr><th>snapshot (end offset)</th><th>epoch</th><th>size</th></tr>")
            out.extend(
                f"<tr><td>{k.end_offset:,}</td><td>{k.epoch}</td><td>{human_size(k.bytes)}</td></tr>"
                for k in shown
            )
            out.append("</table>")
            if len(r.kraft_snapshots) > len(shown):
                out.append(
                    f"<p class=note>{len(r.kraft_snapshots) - len(shown):,} older snapshots not listed.</p>"
                )
    t = r.timeline
    if t.epoch_changes or r.epoch_checkpoint:
        out.append(
            "<h4>Leader epochs</h4><table><tr><th>epoch</th><th>from offset (batches)</th><th>first batch at</th>"
            "<th>leader-epoch-checkpoint start offset</th></tr>"
        )
        ck = {e.epoch: e.start_offset for e in r.epoch_checkpoint or ()}
        seen = set()
        for e in t.epoch_changes:
            seen.add(e.epoch)
            out.append(
                f"<tr><td>{e.epoch}</td><td>{e.offset:,}</td>{_ts(e.timestamp)}<td>{_num(ck.get(e.epoch))}</td></tr>"
            )
        for epoch, start in ck.items():
            if epoch not in seen:
                out.append(f"<tr><td>{epoch}</td><td>-</td><td>-</td><td>{start:,}</td></tr>")
        out.append("</table>")
        if t.epoch_changes_total > len(t.epoch_changes):
            out.append(
                f"<p class=note>{t.epoch_changes_total - len(t.epoch_changes):,} more changes not listed.</p>"
            )
    if t.silences:
        out.append("<h4>Longest silences (no batch)</h4><ul>")
        out.extend(
            f"<li>{duration(g.duration)}: {iso(g.start)} &rarr; {iso(g.end)} (offset {g.after_offset:,} then "
            f"{g.before_offset:,})</li>"
            for g in t.silences
        )
        out.append("</ul>")
    if t.offset_jumps:
        out.append(
            f"<p>{t.offset_jumps:,} jumps between consecutive batches skip {t.offsets_skipped:,} offsets "
            "(compaction, or records lost).</p>"
        )
    if r.findings or r.kinds:
        out.append("<h4>verify's problems</h4><ul>")
        out.extend(f'<li class="bad">{_finding_html(f)}</li>' for f in r.findings)
        more = sum(r.kinds.values()) - len(r.findings)
        if more > 0:
            out.append(
                f"<li>... {more:,} more ({', '.join(f'{k}: {n}' for k, n in sorted(r.kinds.items()))})</li>"
            )
        out.append("</ul>")
    out.extend(f'<p class="bad">problem: {escape(p)}</p>' for p in sentences(r.problems))
    return "".join(out)


_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
:root { --fg:#1b1f24; --muted:#5b6470; --line:#d9dee5; --bg:#fff; --band:#f4f6f9; --blue:#2563eb; --bad:#b42318;
  --warn:#b54708; --good:#067647; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 1100px; padding: 0 16px 40px; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
pre { background: var(--band); padding: 6px 8px; overflow-x: auto; }
header { border-bottom: 1px solid var(--line); padding: 12px 0 6px; position: sticky; top: 0; background: var(--bg); z-index: 2; }
header h1 { margin: 0; font-size: 20px; } .sub { margin: 2px 0 6px; color: var(--muted); }
nav a { margin-right: 14px; color: var(--blue); text-decoration: none; }
h2 { margin-top: 28px; border-bottom: 2px solid var(--line); padding-bottom: 4px; font-size: 18px; }
h3 { font-size: 15px; margin: 18px 0 6px; } h3 small { font-weight: normal; color: var(--muted); }
h4 { margin: 14px 0 4px; font-size: 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px; margin: 10px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; } .card.wide { grid-column: span 2; }
.card .v { font-size: 17px; font-weight: 600; } .card .l { color: var(--muted); font-size: 12px; }
.card.bad { border-color: var(--bad); } .card.bad .v { color: var(--bad); }
.card.warn .v { color: var(--warn); } .card.good .v { color: var(--good); }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 12px; display: block; overflow-x: auto; max-width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 6px; text-align: left; vertical-align: top; white-space: nowrap; }
th { background: var(--band); font-weight: 600; white-space: normal; } td.wrap { white-space: normal; min-width: 16em; } td.ts, table.rows td:nth-child(8), table.rows td:nth-child(9) { white-space: normal; }
.nw { white-space: nowrap; }
tr.bad td { background: #fdecea; } tr.warn td { background: #fff6e5; }
.bad { color: var(--bad); } .warn { color: var(--warn); } .good { color: var(--good); } li.bad, p.bad { color: var(--bad); }
.note { color: var(--muted); } ul.cols { columns: 3; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 4px 0 8px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
section.partition { border-top: 1px solid var(--line); margin-top: 20px; }
details { margin: 4px 0; } summary { cursor: pointer; font-weight: 600; }
svg.chart { display: block; max-width: 100%; height: auto; margin: 8px 0 2px; font-size: 11px; }
svg .frame { fill: #fbfcfd; stroke: var(--line); } svg .grid { stroke: #edf0f3; }
svg .tick, svg .axis-label, svg .row-label { fill: var(--muted); } svg .chart-title { fill: var(--fg); font-weight: 600; font-size: 12px; }
svg .offsets { fill: none; stroke: var(--blue); stroke-width: 1.8; } svg .offset-dot { fill: var(--blue); }
svg .segment { stroke: #98a2b3; stroke-dasharray: 3 3; } svg .epoch { stroke: #7a2ed6; stroke-width: 1.5; }
svg text.epoch { fill: #7a2ed6; } svg .deleted { fill: rgba(217, 45, 32, .16); stroke: rgba(217,45,32,.5); }
svg .silence { fill: rgba(100, 116, 139, .18); } svg .band-label { fill: var(--muted); font-size: 10.5px; }
svg .lso { stroke: #f79009; stroke-width: 1.5; stroke-dasharray: 6 3; } svg text.lso { fill: var(--warn); }
svg .now { stroke: #101828; stroke-dasharray: 2 2; } svg text.now { fill: #101828; }
svg .rate { fill: #53b1fd; } svg .batch { fill: #84adff; } svg .batch-max { fill: #1d2939; }
svg .size { fill: #84adff; } svg .span { fill: #84adff; } svg .span-end { fill: #2563eb; } svg .internal { fill: #d0d5dd; } svg .problem { fill: #f97066; }
svg .committed { fill: #84adff; } svg .lag { fill: #fdb022; } svg .rest { fill: #fec84b; opacity: .6; }
svg .cut { stroke: #fff; stroke-width: 2.5; fill: none; }
svg text.cut-label { fill: var(--fg); font-size: 10.5px; }
svg text.band-label, svg text.hlabel, svg text.vlabel, svg text.cut-label { stroke: #fbfcfd; stroke-width: 3px; stroke-linejoin: round;
  stroke-dasharray: none; paint-order: stroke; }
p.why { color: var(--muted); margin: 0 0 4px; font-size: 12.5px; }
svg .seg0 { fill: #d0d5dd; } svg .seg1 { fill: #98a2b3; } svg .gone { fill: #eaecf0; } svg .live { fill: #a6f4c5; }
svg .ep0 { fill: #d6bbfb; } svg .ep1 { fill: #b692f6; } svg .ep2 { fill: #e9d7fe; } svg .ep3 { fill: #9e77ed; } svg .epx { fill: #eaecf0; }
svg .checkpoint { fill: #53389e; } svg .in-bar { fill: #1d2939; font-size: 10px; }
svg .producer { fill: #84adff; } svg .txn-producer { fill: #fdb022; }
svg .aborted { fill: #f97066; } svg .open { fill: #fdb022; } svg .hanging { fill: #912018; }
.legend { color: var(--muted); font-size: 12px; margin: 0 0 8px; } .legend .k { display: inline-block; width: 14px; height: 10px; margin: 0 4px 0 10px; vertical-align: middle; }
.legend .offsets { background: var(--blue); } .legend .segment { border-left: 2px dashed #98a2b3; }
.legend .epoch { background: #7a2ed6; width: 3px; } .legend .deleted { background: rgba(217,45,32,.25); }
.legend .silence { background: rgba(100,116,139,.25); } .legend .lso { border-top: 2px dashed #f79009; height: 0; }
footer { margin-top: 30px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); padding-top: 8px; }
@media print { header { position: static; } details { display: block; } }
</style></head><body>
"""

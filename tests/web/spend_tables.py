"""The spend section's tables and bars as the organization page renders them
(stdlib html.parser): {chart: {"head": [...], "rows": [[...]], "total": [...], "bars": [credits]}}."""

from html.parser import HTMLParser


class _SpendParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts: dict[str, dict] = {}
        self.chart = self.part = None
        self.row: list[str] | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "data-spend-chart" in attrs:
            self.chart = self.charts.setdefault(attrs["data-spend-chart"],
                                                {"head": [], "rows": [], "total": [], "bars": []})
        elif tag == "rect" and self.chart is not None:
            self.chart["bars"].append(int(attrs["data-credits"]))
        elif tag in ("thead", "tbody", "tfoot"):
            self.part = tag
        elif tag == "tr":
            self.row = []
        elif tag in ("th", "td") and self.row is not None:
            self.cell = []

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self.cell is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None and self.chart is not None:
            if self.part == "thead":
                self.chart["head"] = self.row
            elif self.part == "tfoot":
                self.chart["total"] = self.row
            else:
                self.chart["rows"].append(self.row)
            self.row = None
        elif tag == "table":
            self.part = None


def spend_tables(html: str) -> dict[str, dict]:
    parser = _SpendParser()
    parser.feed(html)
    return parser.charts

"""The report page laid out by a real browser (headless Chromium, where the machine has it): nothing of a feature's
card runs past the card's edge, and nothing in a table cell runs past the cell (issue 42, item 10: the label's
train bar ran into the eval percentage; the `fnlwgt` quantile row was cut at the card's edge).

A script added to a copy of the page measures every box after layout and writes what sticks out into the page;
`chromium --dump-dom` prints the page as laid out.
"""

import json
import re
import shutil
import subprocess

import pytest

from skewless.report import render_report

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine to lay the page out")

# every element and every text of each container, measured against the container's box (half a pixel of rounding)
MEASURE = """<script>
(() => {
  const outside = [];
  const boxes = (node) => node.nodeType === Node.TEXT_NODE
    ? (node.textContent.trim() ? [...(() => { const r = document.createRange(); r.selectNodeContents(node);
                                              return r.getClientRects(); })()] : [])
    : [node.getBoundingClientRect()].filter((r) => r.width > 0);
  const check = (container, kind) => {
    const edge = container.getBoundingClientRect();
    const walker = document.createTreeWalker(container, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const box of boxes(node)) {
        if (box.left < edge.left - 0.5 || box.right > edge.right + 0.5) {
          outside.push({kind, container: (container.id || container.closest('[id]')?.id || ''),
                        what: (node.textContent || node.nodeName).trim().slice(0, 40),
                        by: Math.max(edge.left - box.left, box.right - edge.right)});
        }
      }
    }
  };
  document.querySelectorAll('.feature').forEach((card) => check(card, 'card'));
  document.querySelectorAll('.feature td, .feature th').forEach((cell) => check(cell, 'cell'));
  const shown = document.createElement('pre');
  shown.id = 'measured';
  shown.textContent = JSON.stringify(outside);
  document.body.appendChild(shown);
})();
</script>"""


def laid_out(page: str, folder, width: int) -> list[dict]:
    """What sticks out of a card or a cell when Chromium lays `page` out in a window `width` pixels wide."""
    measured = folder / f"measured-{width}.html"
    measured.write_text(page.replace("</body>", MEASURE + "</body>"))
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={width},2000",
                           "--dump-dom", measured.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stderr[-2000:]
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


@pytest.mark.parametrize("width", [1280, 800])
def test_nothing_runs_past_a_card_or_a_cell(example_run, tmp_path, width):
    with open(render_report(example_run.output_dir), encoding="utf-8") as handle:
        html = handle.read()
    assert 'id="label"' in html and "quantiles" in html  # the label's card and the quantile rows are on the page
    assert laid_out(html, tmp_path, width) == []

"""css.py: the report page's style sheet (inline in report.html: no network)."""

CSS = """
:root { --ink:#1c2230; --muted:#5b6475; --line:#dde1e8; --head:#eef1f6; --accent:#1f5fa8;
  --fast-bg:#dcf1e2; --fast:#0d5a21; --slow-bg:#fbe1de; --slow:#8c1d12; --same-bg:#eeeeee; }
* { box-sizing: border-box; }
html { background:#f4f5f8; }
body { margin:0; color:var(--ink); font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
  "Helvetica Neue",Arial,sans-serif; }
header.top { background:#17202e; color:#fff; padding:28px 40px 22px; }
header.top h1 { margin:0 0 4px; font-size:26px; font-weight:650; letter-spacing:.2px; }
header.top h1 span { color:#8fb8ea; font-weight:400; }
header.top p { margin:2px 0; color:#c8d1de; font-size:14px; }
.page { display:flex; align-items:flex-start; max-width:1500px; margin:0 auto; }
nav.toc { position:sticky; top:0; flex:0 0 230px; max-height:100vh; overflow:auto;
  padding:22px 10px 22px 24px; font-size:13.5px; }
nav.toc h2 { font-size:12px; text-transform:uppercase; letter-spacing:.08em; color:var(--muted);
  margin:0 0 8px; }
nav.toc ol { list-style:none; margin:0; padding:0; }
nav.toc ol ol { padding-left:14px; margin:2px 0 6px; }
nav.toc a { color:var(--ink); text-decoration:none; display:block; padding:2px 6px; border-radius:4px; }
nav.toc a:hover { background:#e3e8f0; }
main { flex:1 1 auto; min-width:0; padding:18px 32px 60px 14px; }
section.card { background:#fff; border:1px solid var(--line); border-radius:8px;
  padding:18px 24px 20px; margin:0 0 22px; }
h2 { font-size:21px; margin:0 0 10px; font-weight:640; }
h3 { font-size:17px; margin:22px 0 8px; font-weight:620; }
h4 { font-size:15px; margin:16px 0 6px; }
p { margin:6px 0 10px; }
.muted, caption { color:var(--muted); }
a { color:var(--accent); }
code, pre { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:13px; }
pre { background:#f6f7f9; border:1px solid var(--line); border-radius:6px; padding:10px 12px;
  overflow:auto; }
.scroll { overflow-x:auto; margin:8px 0 14px; }
table { border-collapse:collapse; font-variant-numeric:tabular-nums; font-size:13.5px; }
caption { caption-side:top; text-align:left; padding:0 0 6px; font-size:13px; }
th, td { padding:4px 9px; border-bottom:1px solid var(--line); vertical-align:top; }
thead th { background:var(--head); font-weight:600; text-align:center; white-space:nowrap;
  border-bottom:1px solid #c9d0db; }
th.row, td.row { text-align:left; white-space:nowrap; font-weight:550; }
td.num { text-align:right; white-space:nowrap; }
td.row.group { white-space:normal; min-width:280px; font-weight:500; }
tbody tr:nth-child(even) td { background-color:#fafbfc; }
tbody tr:hover td { background-color:#f1f5fb; }
td.ratio { text-align:right; white-space:nowrap; }
td.ratio small { display:block; font-size:11px; opacity:.85; }
tbody tr td.faster { background:var(--fast-bg); color:var(--fast); }
tbody tr td.slower { background:var(--slow-bg); color:var(--slow); }
tbody tr td.same { background:var(--same-bg); color:#555; }
tbody tr td.base, tbody tr td.nointerval { color:var(--muted); font-style:italic; }
tbody tr td.na { color:#777; text-align:center; font-style:italic; }
tbody tr td.failed { background:repeating-linear-gradient(135deg,#fff 0 6px,#f7e4e2 6px 12px);
  color:var(--slow); text-align:center; font-size:12.5px; }
.legend { display:flex; flex-wrap:wrap; gap:8px 16px; font-size:12.5px; color:var(--muted);
  margin:4px 0 8px; }
.legend span.key { display:inline-block; padding:0 7px; border-radius:3px; margin-right:4px; }
.key.faster { background:var(--fast-bg); color:var(--fast); }
.key.slower { background:var(--slow-bg); color:var(--slow); }
.key.same { background:var(--same-bg); color:#555; }
.figs { display:grid; grid-template-columns:repeat(auto-fill,minmax(430px,1fr)); gap:14px; margin:10px 0; }
figure.wide { grid-column:1 / -1; }
figure.wide svg { max-width:760px; margin:0 auto; }
figure { margin:0; border:1px solid var(--line); border-radius:6px; padding:6px 6px 4px; background:#fff; }
figure svg { display:block; width:100%; height:auto; }
figcaption { font-size:12.5px; color:var(--muted); padding:4px 6px 2px; }
.notice { border-left:4px solid #c77d0a; background:#fff7e8; padding:10px 16px; border-radius:4px;
  margin:0 0 18px; }
.notice.bad { border-left-color:#b3261e; background:#fdeeee; }
.notice ul { margin:4px 0 0; padding-left:20px; }
dl.kv { display:grid; grid-template-columns:max-content 1fr; gap:3px 18px; margin:6px 0; font-size:14px; }
dl.kv dt { color:var(--muted); }
dl.kv dd { margin:0; word-break:break-word; }
.pill { display:inline-block; background:#e6edf7; color:#23426d; border-radius:10px; padding:0 8px;
  font-size:12px; margin-left:6px; vertical-align:2px; font-weight:500; }
details summary { cursor:pointer; color:var(--accent); margin:6px 0; }
table.stats thead th { white-space:normal; max-width:110px; }
td.cmd { white-space:normal; word-break:break-all; min-width:240px; }
@media (max-width:900px) { nav.toc { display:none; } main { padding:12px; } }
@media print { nav.toc { display:none; } html, body { background:#fff; }
  section.card { border:none; padding:0; } header.top { background:#fff; color:#000; } }
"""

"""The participant and experimenter pages: Jinja2 templates with autoescaping (no stored or
configured text reaches a page unescaped), plain HTML forms, a few lines of JavaScript that unlock
the questions when every clip has played to its end (on a block item, once the server has recorded
each clip's end), and the error page. The style sheet and the script are served as files
(`STYLE`, `SCRIPT`), so that the content security policy allows no inline code."""

from __future__ import annotations

from jinja2 import DictLoader, Environment, select_autoescape

STYLE = """
body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;line-height:1.4}
.clips{display:flex;gap:1em;flex-wrap:wrap}.clip{text-align:center}
video{max-width:440px;width:100%;background:#222}
.notice{background:#fff3c4;border:2px solid #e0a800;padding:.6em;font-weight:bold}
fieldset{border:1px solid #bbb;margin:1em 0;padding:.6em}fieldset:disabled{opacity:.45}
.scale label{display:inline-block;margin:0 .5em;text-align:center}
.scale .end{color:#555;font-size:.9em}button{font-size:1.05em;padding:.4em 1.2em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em}
"""

SCRIPT = """
const videos = Array.from(document.querySelectorAll("video.stimulus"));
const endedAction = document.getElementById("answers-form").dataset.ended;
const ended = new Set();
videos.forEach((v, k) => {
  document.querySelectorAll("button.play")[k].addEventListener("click", () => v.play());
  v.addEventListener("ended", async () => {
    if (endedAction) {
      const body = new URLSearchParams({stimulus: v.dataset.stimulus});
      const reply = await fetch(endedAction, {method: "POST", body: body});
      if (!reply.ok) {
        document.getElementById("status").textContent = "Could not reach the server: play again.";
        return;
      }
    }
    ended.add(k);
    if (ended.size === videos.length) document.getElementById("answers").disabled = false;
  });
});
"""

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/study.css">
</head><body><h1>{{ title }}</h1>{% block body %}{% endblock %}</body></html>"""

TEXT = """{% extends "base" %}{% block body %}<p>{{ text }}</p>
{% if action %}<form method="post" action="{{ action }}"><button type="submit" name="go"
 value="1" id="continue">{{ button }}</button></form>{% endif %}{% endblock %}"""

ITEM = """{% extends "base" %}{% block body %}
<p>{{ heading }}</p>
{% if notice %}<p class="notice" id="notice">{{ notice }}</p>{% endif %}
<div class="clips">{% for clip in clips %}<div class="clip">{% if clips|length > 1 %}
<h3>Clip {{ clip.label }}</h3>{% endif %}
<video class="stimulus" src="/media/{{ clip.stimulus_id }}" data-stimulus="{{ clip.stimulus_id }}"
 preload="auto" playsinline
 {% if muted %}muted{% endif %}></video><br>
<button type="button" class="play">Play clip {{ clip.label }}</button></div>{% endfor %}</div>
<form method="post" action="{{ action }}" id="answers-form"
 {% if ended_action %}data-ended="{{ ended_action }}"{% endif %}>
<input type="hidden" name="stimulus_a" value="{{ clips[0].stimulus_id }}">
{% if clips|length > 1 %}<input type="hidden" name="stimulus_b" value="{{ clips[1].stimulus_id }}">
{% endif %}
<fieldset id="answers" disabled>
{% for q in questions %}<fieldset class="scale"><legend>{{ q.text }}</legend>
{% if pairwise %}{% for value, label in choices %}<label>
<input type="radio" name="{{ q.dimension }}" value="{{ value }}" required><br>{{ label }}</label>
{% endfor %}
{% else %}<span class="end">{{ scale_labels[0] }}</span>{% for v in scale %}<label>
<input type="radio" name="{{ q.dimension }}" value="{{ v }}" required><br>{{ v }}</label>
{% endfor %}
<span class="end">{{ scale_labels[1] }}</span>{% endif %}</fieldset>{% endfor %}
<button type="submit" id="submit">Next</button></fieldset></form>
<p id="status"></p><p>{{ progress }}</p>
<script src="/static/study.js"></script>{% endblock %}"""

TABLES = """{% extends "base" %}{% block body %}{% for name, table in tables %}<h2>{{ name }}</h2>
<table><tr>{% for c in table.columns %}<th>{{ c }}</th>{% endfor %}</tr>
{% for row in table.itertuples(index=False) %}<tr>
{% for v in row %}<td>{{ v }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endfor %}{% endblock %}"""

ERROR = """{% extends "base" %}{% block body %}<h2>{{ heading }}</h2><p id="error">{{ text }}</p>
{% if link %}<p><a href="{{ link }}">{{ link_text }}</a></p>{% endif %}{% endblock %}"""

pages = Environment(
    loader=DictLoader({"base": BASE, "text": TEXT, "item": ITEM, "tables": TABLES, "error": ERROR}),
    autoescape=select_autoescape(default=True, default_for_string=True),
)


def render(name: str, **values) -> str:
    return pages.get_template(name).render(**values)

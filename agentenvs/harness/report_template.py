"""The Jinja2 template of ``report.html``: plain HTML, inline CSS and a few lines of JS."""

TEMPLATE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>agentenvs run: {{ summary.run.path }}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #f0f0f0; }
.plots { display: flex; flex-wrap: wrap; gap: 1rem; }
.plot svg { max-width: 480px; height: auto; }
.episode { border: 1px solid #ccc; padding: .5rem 1rem; margin-top: .5rem; }
.step { border-top: 1px dashed #bbb; padding: .5rem 0; }
pre { background: #f7f7f7; padding: .4rem; white-space: pre-wrap; word-break: break-word; max-height: 24rem; overflow: auto; }
.ok { color: #1a7f37; } .bad { color: #c62828; } .muted { color: #777; }
#headline { font-size: 1.05rem; padding: .5rem .75rem; background: #f3f6fa; border-left: 4px solid #4c72b0; }
#headline.warn { background: #fff6e0; border-left-color: #d08700; }
.badge { display: inline-block; font-size: .8rem; padding: 0 .4rem; border-radius: .6rem; background: #d08700; color: #fff; }
img.shot { max-width: 640px; image-rendering: pixelated; border: 1px solid #999; min-width: 60px; }
</style>
</head>
<body>
<h1>agentenvs run report</h1>
<p id="run-meta">Run <code>{{ summary.run.path }}</code>, policy <b id="policy-name">{{ summary.run.policy.name }}</b>
{% if summary.run.policy.model %}(model <code>{{ summary.run.policy.model }}</code>){% endif %},
agentenvs {{ summary.run.agentenvs_version }}, created {{ summary.run.created_at }}.
{{ summary.recorded }} of {{ summary.planned }} episodes recorded{% if not summary.complete %} <b class="bad">(incomplete: resume with --resume)</b>{% endif %}.</p>
<p id="headline" class="{{ 'warn' if summary.overall.infra or summary.overall.flagged or not summary.complete else '' }}">{{ summary.headline }}
<span class="muted">(infra <b id="headline-infra">{{ summary.overall.infra }}</b>, flagged <b id="headline-flagged">{{ summary.overall.flagged }}</b>)</span></p>

{% macro metrics_table(id, title, groups) %}
<table id="{{ id }}">
<thead><tr><th>{{ title }}</th><th>episodes</th><th>success</th><th>95% CI</th><th>success, infra as failure</th><th>mean score</th><th>pass@k</th><th>pass^k</th><th>steps</th><th>time (s)</th><th>tokens</th><th>infra</th><th>flagged</th></tr></thead>
<tbody>
{% for name, g in groups.items() %}
<tr><td>{{ name }}</td><td>{{ g.scored }}</td><td>{{ g.success_rate | pct }}</td><td>{{ g.success_ci95 | ci }}</td>
<td class="infra-as-failure">{{ g.success_rate_infra_as_failure | pct }} {{ g.success_ci95_infra_as_failure | ci }}</td>
<td>{{ g.mean_score | num(3) }}</td>
<td>{% for k, v in g.pass_at_k.items() %}@{{ k }}: {{ v | num(3) }}{% if not loop.last %}, {% endif %}{% endfor %}</td>
<td>{% for k, v in g.pass_hat_k.items() %}^{{ k }}: {{ v | num(3) }}{% if not loop.last %}, {% endif %}{% endfor %}</td>
<td>{{ g.steps_mean | num(1) }}</td><td>{{ g.time_mean_sec | num(2) }}</td><td>{{ g.tokens_total }}</td><td>{{ g.infra }}</td><td>{{ g.flagged }}</td></tr>
{% endfor %}
</tbody></table>
{% endmacro %}

<h2>Summary</h2>
{{ metrics_table("overall-table", "overall", {"all": summary.overall}) }}
<h2>By family</h2>
{{ metrics_table("family-table", "family", summary.by_family) }}
<h2>By difficulty</h2>
{{ metrics_table("difficulty-table", "difficulty", summary.by_difficulty) }}
{% if summary.by_tag %}<h2>By tag</h2>
{{ metrics_table("tag-table", "tag", summary.by_tag) }}{% endif %}

<h2>Plots</h2>
<div class="plots">
{% for p in plots %}<div class="plot" id="plot-{{ p.id }}">{{ p.svg | safe }}</div>{% endfor %}
</div>

<h2>Tasks</h2>
<table id="task-table">
<thead><tr><th>task</th><th>scored</th><th>successes</th><th>success</th><th>mean score</th><th>steps</th><th>time (s)</th><th>infra</th><th>flagged</th></tr></thead>
<tbody>
{% for task, t in summary.by_task.items() %}
<tr><td>{{ task }}</td><td>{{ t.scored }}</td><td>{{ t.successes }}</td><td>{{ t.success_rate | pct }}</td><td>{{ t.mean_score | num(3) }}</td>
<td>{{ t.steps_mean | num(1) }}</td><td>{{ t.time_mean_sec | num(2) }}</td><td>{{ t.infra }}</td><td>{{ t.flagged }}</td></tr>
{% endfor %}
</tbody></table>

<h2>Infrastructure errors ({{ summary.infra_errors | length }})</h2>
{% if summary.infra_errors %}
<table id="infra-table"><thead><tr><th>task</th><th>trial</th><th>attempts</th><th>error</th></tr></thead><tbody>
{% for e in summary.infra_errors %}<tr><td>{{ e.task_id }}</td><td>{{ e.trial }}</td><td>{{ e.attempts }}</td><td style="text-align:left">{{ e.error }}</td></tr>{% endfor %}
</tbody></table>
{% else %}<p class="muted">None: every episode was played to the end.</p>{% endif %}

<h2>Integrity flags ({{ summary.integrity_flags | length }})</h2>
{% if summary.integrity_flags %}
<p>The env detected a hack it could not prevent in these episodes; their scores stand as graded.</p>
<table id="flagged-table"><thead><tr><th>task</th><th>trial</th><th>flags</th></tr></thead><tbody>
{% for e in summary.integrity_flags %}<tr><td>{{ e.task_id }}</td><td>{{ e.trial }}</td><td style="text-align:left">{{ e.flags | join("; ") }}</td></tr>{% endfor %}
</tbody></table>
{% else %}<p class="muted">None.</p>{% endif %}

<h2>Trajectories</h2>
<label>Episode:
<select id="episode-select">
{% for ep in episodes %}<option value="{{ ep.id }}">{{ ep.record.task_id }} #{{ ep.record.trial }}:
{% if ep.record.status != "scored" %}infra error{% elif ep.record.success %}success{% else %}failure{% endif %}{% if ep.record.integrity_flags %} [flagged]{% endif %}</option>{% endfor %}
</select></label>
{% for ep in episodes %}
<section class="episode" id="{{ ep.id }}" {% if not loop.first %}hidden{% endif %}>
<h3>{{ ep.record.task_id }}, trial {{ ep.record.trial }}
{% if ep.record.status != "scored" %}<span class="bad">infra error</span>
{% elif ep.record.success %}<span class="ok">success</span>{% else %}<span class="bad">failure</span>{% endif %}
{% if ep.record.integrity_flags %}<span class="badge flagged" title="{{ ep.record.integrity_flags | join('; ') }}">flagged</span>{% endif %}</h3>
{% if ep.record.integrity_flags %}<ul class="integrity-flags">{% for f in ep.record.integrity_flags %}<li>{{ f }}</li>{% endfor %}</ul>{% endif %}
<p>score {{ ep.record.score | num(3) }}, {{ ep.record.steps if ep.record.steps is not none else "-" }} steps,
{{ ep.record.elapsed_sec | num(2) }} s, seed {{ ep.record.seed }}{% if ep.record.error %}, <span class="bad">{{ ep.record.error_kind }}: {{ ep.record.error }}</span>{% endif %}</p>
{% if ep.record.task_steps %}<table class="task-steps"><thead><tr><th>task step</th><th>reward</th></tr></thead><tbody>
{% for t in ep.record.task_steps %}<tr><td>{{ t.name }}</td><td>{{ t.reward | num(3) }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% if ep.record.warnings %}<ul class="warnings">{% for w in ep.record.warnings %}<li>warning: {{ w }}</li>{% endfor %}</ul>{% endif %}
{% if ep.record.artifacts %}<p class="muted">Artifacts: {{ ep.record.artifacts | join(", ") }}</p>{% endif %}
{% if not ep.shown %}<p class="muted">Steps not shown in the report (too many episodes); see {{ ep.record.trajectory }}.</p>{% endif %}
{% for s in ep.steps %}
<div class="step" data-step="{{ s.step }}">
<b>Step {{ s.step }}</b>{% if s.reward is not none %}, reward {{ s.reward | num(3) }}{% endif %}{% if s.progress is not none %}, progress {{ s.progress | pct }}{% endif %}
{% if s.step %}<div>Action: <code class="action">{{ s.action | tojson }}</code>{% if s.note %} <span class="muted">({{ s.note }})</span>{% endif %}</div>{% endif %}
{% if s.message %}<div class="muted">Policy: {{ s.message }}</div>{% endif %}
{% if s.action_error %}<div class="bad action-error">Action error: {{ s.action_error }}</div>{% endif %}
<pre class="obs">{{ s.text }}</pre>
{% for k, v in s.extras.items() %}<div class="muted">{{ k }}: {{ v }}</div>{% endfor %}
{% for img in s.images %}{% if img.src %}<img class="shot" alt="{{ img.name }} at step {{ s.step }}" src="{{ img.src }}">{% endif %}{% endfor %}
{% if s.checks %}<div class="checks">Checks: {% for name, ok in s.checks.items() %}<span class="{{ 'ok' if ok else 'bad' }}">{{ '&#10003;' | safe if ok else '&#10007;' | safe }} {{ name }}</span> {% endfor %}</div>{% endif %}
</div>
{% endfor %}
</section>
{% endfor %}
<script>
document.getElementById("episode-select").addEventListener("change", function (event) {
  document.querySelectorAll("section.episode").forEach(function (s) { s.hidden = s.id !== event.target.value; });
});
</script>
</body>
</html>
"""

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
fieldset { display: inline-block; border: 1px solid #ccc; margin: 0 .5rem .5rem 0; padding: .2rem .6rem; }
fieldset label { margin-right: .7rem; white-space: nowrap; }
.outcome { display: inline-block; font-size: .8rem; padding: 0 .45rem; border-radius: .6rem; color: #fff; background: #777; }
.o-success { background: #1a7f37; } .o-fail { background: #c62828; } .o-agent-fault { background: #8e24aa; } .o-infra { background: #d08700; }
details { margin: .4rem 0; } summary { font-weight: 600; cursor: pointer; }
.act { margin: .2rem 0; } .kind { font-size: .75rem; color: #555; background: #eef; border-radius: .3rem; padding: 0 .3rem; margin-right: .4rem; }
code.action { display: inline-block; vertical-align: top; max-width: calc(100% - 9rem); white-space: pre-wrap; word-break: break-word; background: #f3f3f3; padding: .05rem .3rem; }
.tokens { color: #555; }
.d-add { background: #e6ffec; color: #116329; } .d-del { background: #ffebe9; color: #82071e; }
.d-hunk { color: #0550ae; } .d-meta { font-weight: 600; }
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
<div id="filters">
<fieldset id="filter-outcome"><legend>Outcome</legend>
{% for name, n in outcomes %}<label><input type="checkbox" class="filter" data-filter="outcome" value="{{ name }}" checked> <span class="outcome o-{{ name }}">{{ name }}</span> ({{ n }})</label>
{% endfor %}</fieldset>
<fieldset id="filter-family"><legend>Family</legend>
{% for name, n in families %}<label><input type="checkbox" class="filter" data-filter="family" value="{{ name }}" checked> {{ name }} ({{ n }})</label>
{% endfor %}</fieldset>
</div>
<p><label>Episode:
<select id="episode-select">
{% for ep in episodes %}<option value="{{ ep.id }}" data-outcome="{{ ep.view.outcome }}" data-family="{{ ep.view.family }}">{{ ep.record.task_id }} #{{ ep.record.trial }}: {{ ep.view.outcome }}{% if ep.record.integrity_flags %} [flagged]{% endif %}</option>{% endfor %}
</select></label> <span id="filter-count" class="muted">{{ episodes | length }} of {{ episodes | length }} episodes</span></p>
<p id="no-match" class="muted" hidden>No episode matches the filters.</p>
{% for ep in episodes %}
{% set v = ep.view %}
<section class="episode" id="{{ ep.id }}" data-outcome="{{ v.outcome }}" data-family="{{ v.family }}" data-task="{{ ep.record.task_id }}" {% if not loop.first %}hidden{% endif %}>
<h3>{{ ep.record.task_id }}, trial {{ ep.record.trial }} <span class="outcome o-{{ v.outcome }}">{{ v.outcome }}</span>
{% if ep.record.integrity_flags %}<span class="badge flagged" title="{{ ep.record.integrity_flags | join('; ') }}">flagged</span>{% endif %}</h3>
{% if ep.record.integrity_flags %}<ul class="integrity-flags">{% for f in ep.record.integrity_flags %}<li>{{ f }}</li>{% endfor %}</ul>{% endif %}
<p>{{ v.family }}; score {{ ep.record.score | num(3) }}, {{ ep.record.steps if ep.record.steps is not none else "-" }} steps,
{{ ep.record.elapsed_sec | num(2) }} s, seed {{ ep.record.seed }}{% if ep.tokens %}, <span class="tokens">{{ ep.tokens }} tokens</span>{% endif %}{% if ep.record.error %}, <span class="bad">{{ ep.record.error_kind }}: {{ ep.record.error }}</span>{% endif %}</p>
{% if ep.record.task_steps %}<table class="task-steps"><thead><tr><th>task step</th><th>reward</th></tr></thead><tbody>
{% for t in ep.record.task_steps %}<tr><td>{{ t.name }}</td><td>{{ t.reward | num(3) }}</td></tr>{% endfor %}</tbody></table>{% endif %}
{% if ep.record.warnings %}<ul class="warnings">{% for w in ep.record.warnings %}<li>warning: {{ w }}</li>{% endfor %}</ul>{% endif %}
{% if ep.record.artifacts %}<p class="muted">Artifacts: {{ ep.record.artifacts | join(", ") }}</p>{% endif %}
{% if ep.shown %}<details class="instruction" open><summary>Instruction</summary>
{% if ep.instruction is not none %}<pre class="instruction-text">{{ ep.instruction }}</pre>{% else %}<p class="muted">Not recorded in this run.</p>{% endif %}
</details>{% endif %}
<details class="verifier" open><summary>Verifier</summary>
{% if ep.verifier_detail %}<pre class="verifier-detail">{{ ep.verifier_detail }}</pre>{% else %}<p class="muted">No verifier output{% if ep.record.status == "infra" %} (never scored){% endif %}.</p>{% endif %}
</details>
{% if ep.diff %}<details class="patch" open><summary>Submitted patch</summary>
<pre class="diff">{% for kind, line in ep.diff %}<span class="d-{{ kind }}">{{ line }}</span>
{% endfor %}</pre></details>{% endif %}
{% if not ep.shown %}<p class="muted">Steps not shown in the report (too many episodes); see {{ ep.record.trajectory }}.</p>{% endif %}
{% for st in ep.steps %}{% set s = st.view %}
<div class="step" data-step="{{ s.step }}">
<b>Step {{ s.step }}</b>{% if s.reward is not none %}, reward {{ s.reward | num(3) }}{% endif %}{% if s.progress is not none %}, progress {{ s.progress | pct }}{% endif %}{% if s.tokens %}, <span class="tokens" title="prompt {{ s.tokens.prompt if s.tokens.prompt is defined else '-' }}, completion {{ s.tokens.completion if s.tokens.completion is defined else '-' }}">{{ s.tokens.total }} tokens</span>{% endif %}
{% if s.task_step %}<div class="muted">Now on task step {{ s.task_step }}</div>{% endif %}
{% if s.step and s.instruction is not none %}<pre class="instruction-text">{{ s.instruction }}</pre>{% endif %}
{% if s.step %}<div class="act"><span class="kind">{{ s.kind }}</span><code class="action">{{ s.action }}</code>{% if s.note %} <span class="muted">({{ s.note }})</span>{% endif %}</div>{% endif %}
{% if s.message %}<div class="muted">Policy: {{ s.message }}</div>{% endif %}
{% if s.action_error %}<div class="bad action-error">Action error: {{ s.action_error }}</div>{% endif %}
{% if st.text %}<pre class="obs">{{ st.text }}</pre>{% else %}<div class="muted obs-empty">(no output)</div>{% endif %}
{% if st.extras %}<div class="muted extras">{% for k, val in st.extras.items() %}<span>{{ k }}: {{ val }}</span>{% if not loop.last %} &middot; {% endif %}{% endfor %}</div>{% endif %}
{% for img in st.images %}{% if img.src %}<img class="shot" alt="{{ img.name }} at step {{ s.step }}" src="{{ img.src }}">{% endif %}{% endfor %}
{% if s.checks %}<div class="checks">Checks: {% for name, ok in s.checks.items() %}<span class="{{ 'ok' if ok else 'bad' }}">{{ '&#10003;' | safe if ok else '&#10007;' | safe }} {{ name }}</span> {% endfor %}</div>{% endif %}
</div>
{% endfor %}
</section>
{% endfor %}
<script>
(function () {
  var select = document.getElementById("episode-select");
  var options = Array.prototype.slice.call(select.options);
  function show(id) {
    document.querySelectorAll("section.episode").forEach(function (s) { s.hidden = s.id !== id; });
  }
  function checked(kind) {
    return Array.prototype.map.call(
      document.querySelectorAll('input.filter[data-filter="' + kind + '"]:checked'), function (i) { return i.value; });
  }
  function applyFilters() {
    var outcomes = checked("outcome"), families = checked("family"), shown = 0;
    options.forEach(function (o) {
      var match = outcomes.indexOf(o.dataset.outcome) >= 0 && families.indexOf(o.dataset.family) >= 0;
      o.hidden = o.disabled = !match;
      if (match) { shown += 1; }
    });
    document.getElementById("filter-count").textContent = shown + " of " + options.length + " episodes";
    document.getElementById("no-match").hidden = shown > 0;
    var current = select.selectedOptions[0];
    if (!current || current.hidden) {
      var first = options.filter(function (o) { return !o.hidden; })[0];
      if (first) { select.value = first.value; }
      show(first ? first.value : "");
    }
  }
  select.addEventListener("change", function (event) { show(event.target.value); });
  document.querySelectorAll("input.filter").forEach(function (i) { i.addEventListener("change", applyFilters); });
}());
</script>
</body>
</html>
"""

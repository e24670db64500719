"""The `sb` command: thin commands over the library. Output goes through sb.report.terminal.

Exit codes: 0 fine; 1 a broken task, a mutant disagreement or a harness failure; 2 bad
input, always as one line `sb: error: ...` and never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

from sb.errors import SbError

TIER = click.Choice(["laptop", "accelerated", "all"])
JOBS_HELP = "grade up to N tasks at once (default: the number of cores)"
ISOLATION_HELP = "sandbox for graded code: bwrap (default on Linux) or none (no isolation; recorded)"
EXECUTOR_HELP = "where gradings run: local (default: this machine) or ray (a Ray cluster; see docs/scaling.md)"
ADDRESS_HELP = "--executor ray: the cluster's HOST:PORT (default: RAY_ADDRESS, else a Ray instance for this command)"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="scratchbench", prog_name="sb")
def cli():
    """scratchbench: can a model actually implement it? Hidden tests decide."""


def _session():
    """The command's one Session (its plugins, its tasks), started by main()."""
    from sb.session import default_session
    return default_session()


def _pm():
    return _session().pm


def _emit_json(data) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def _tasks(slugs=None, suite=None, tier="all", set_name=None, names_must_match=False) -> list:
    """The chosen tasks; each broken task package is one warning line, never a blocker."""
    from sb.catalog import select_tasks
    from sb.report.terminal import print_warning
    tasks, broken = _session().tasks(), _session().broken
    for name, reason in sorted(broken.items()):
        if not slugs or name not in slugs:
            print_warning(f"skipped a broken package: {reason}")
    return select_tasks(tasks, slugs=slugs, suite=suite, tier=tier, set_name=set_name, broken=broken,
                        names_must_match=names_must_match)


def _recorded_set(slugs, suite, tier, set_name) -> str:
    """The set a results file names: a set or `all` only when nothing else narrowed it, so a
    row never carries a set's name for part of that set."""
    narrowed = bool(slugs) or suite is not None or tier not in (None, "all")
    return "custom" if narrowed else set_name or "all"


SETTING_FLAGS = {"temperature": "--temperature", "max_tokens": "--max-tokens", "thinking_budget": "--thinking-budget",
                 "effort": "--effort", "seed": "--seed", "timeout_s": "--timeout",
                 "retry_after_cap_s": "--retry-after-cap"}


def _refuse_settings_no_model_uses(settings: dict, adapters: list) -> None:
    """A setting given to a run of controls alone changes nothing but the results' key."""
    given = [SETTING_FLAGS.get(key, key) for key in settings]
    if given and not any(adapter.uses_settings for adapter in adapters):
        names = " and ".join(sorted({adapter.name for adapter in adapters}))
        raise SbError(f"{given[0]} is not used by {names} (no model is called): drop it")


def _task(slug: str):
    """The one task a command names; only its package is read."""
    from sb.catalog import select_tasks
    tasks, broken = _session().named([slug])
    return select_tasks(tasks, slugs=[slug], broken=broken)[0]


def _sandbox(name: str | None, trusted: bool):
    """The named sandbox; unnamed: bwrap, or for trusted code only, none when bwrap cannot run."""
    return _session().sandbox(name, trusted)


@cli.command("list")
@click.option("--suite", default=None, help="only this suite (ml, coding, production)")
@click.option("--tier", type=TIER, default="all", show_default=True)
@click.option("--set", "set_name", default=None, help="only tasks of this set")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def list_cmd(suite, tier, set_name, as_json):
    """List the installed tasks."""
    from sb.catalog import task_row
    rows = [task_row(t) for t in _tasks(suite=suite, tier=tier, set_name=set_name)]
    if as_json:
        return _emit_json(rows)
    from sb.report.terminal import print_task_list
    print_task_list(rows)


def _task_check_options(command):
    """The options validate and mutants share: which tasks, which sandbox, how many at once."""
    for option in reversed([
        click.argument("slugs", nargs=-1),
        click.option("--tier", type=TIER, default="laptop", show_default=True),
        click.option("--isolation", default=None, help=ISOLATION_HELP),
        click.option("--jobs", type=click.IntRange(min=1), default=None, help=JOBS_HELP),
        *_executor_options(),
        click.option("--json", "as_json", is_flag=True),
    ]):
        command = option(command)
    return command


def _with_options(options):
    def apply(command):
        for option in reversed(options()):
            command = option(command)
        return command
    return apply


def _executor_options() -> list:
    return [click.option("--executor", "executor_name", default=None, metavar="NAME", help=EXECUTOR_HELP),
            click.option("--address", default=None, metavar="HOST:PORT", help=ADDRESS_HELP)]


@contextlib.contextmanager
def _started_executor(name, address, jobs, tasks: list, sandbox):
    """The chosen executor, started for `tasks` (its warnings printed), closed afterwards."""
    from sb.executors import choose_executor
    from sb.parallel import default_jobs
    from sb.report.terminal import print_warning
    with choose_executor(name, _pm(), jobs=jobs or default_jobs(), address=address) as executor:
        executor.start(tasks, sandbox)
        for warning in executor.warnings:
            print_warning(warning)
        yield executor


@cli.command()
@_task_check_options
@click.option("--leaderboard", "leaderboard_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("leaderboard"), show_default=True,
              help="published results: a task whose content changed since its version was published fails")
def validate(slugs, tier, isolation, jobs, executor_name, address, as_json, leaderboard_dir):
    """Check the contract: reference passes, untouched starter fails every hidden test."""
    from sb.checks import validate_all
    from sb.report import terminal
    tasks, sandbox = _tasks(slugs, tier=tier), _sandbox(isolation, trusted=True)
    with _started_executor(executor_name, address, jobs, tasks, sandbox) as executor:
        results = validate_all(tasks, executor, leaderboard_dir, None if as_json else terminal.validation_progress)
    if as_json:
        _emit_json([v.to_dict() for v in results])
    else:
        terminal.print_validations(results)
        _note_placeholders(tasks)
    sys.exit(1 if any(v.verdict == "broken" for v in results) else 0)


def _note_placeholders(tasks: list) -> None:
    """A task still describing itself with sb new's words validates, but says so."""
    from sb.report.terminal import print_note
    from sb.scaffold import PLACEHOLDER_PROBES
    for task in tasks:
        if task.meta.probes == PLACEHOLDER_PROBES:
            print_note(f"{task.slug}: meta.yaml's probes (and category, suite) are still sb new's placeholders")


@cli.command()
@_task_check_options
@click.option("--generate", is_flag=True, help="grade cosmic-ray's mutants of each reference instead of the hand ones")
@click.option("--show", "show_id", default=None, metavar="ID", help="print the diff of one generated mutant")
@click.option("--first-failure", is_flag=True,
              help="stop each mutant's grading at its first failing test: the same verdicts, sooner (CI uses it)")
@click.option("--rebase", is_flag=True,
              help="grade nothing: rewrite each hand mutant patch that no longer applies to the changed reference")
def mutants(slugs, tier, isolation, jobs, executor_name, address, as_json, generate, show_id, first_failure, rebase):
    """Grade every mutant; exit 1 when one gets another verdict than it expects.

    With --generate: every generated mutant must be killed or listed, with a reason, in the
    task's equivalent_mutants.yaml; exit 1 otherwise. With --first-failure a caught mutant's
    grading ends at its first failing test (the tests it never reached count as missing), so
    its line names that test instead of counting every failing one. With --rebase: each hand
    mutant whose patch no longer applies is moved to where the lines it removes now are and
    its file rewritten; exit 1 naming any it cannot place (docs/task-format.md)."""
    from sb.checks import mutants_all
    from sb.parallel import References
    from sb.report import terminal
    if rebase:
        if generate or show_id:
            raise SbError("--rebase rewrites the hand mutants; it takes no --generate or --show")
        return _rebased_mutants(_tasks(slugs, tier=tier), as_json)
    if show_id or generate:
        return _generated_mutants(slugs, tier, isolation, jobs, (executor_name, address), as_json, show_id,
                                  first_failure)
    tasks, sandbox = _tasks(slugs, tier=tier), _sandbox(isolation, trusted=True)
    with _started_executor(executor_name, address, jobs, tasks, sandbox) as executor:
        per_task = mutants_all(tasks, executor, References(executor), None if as_json else terminal.mutants_progress,
                               first_failure)
    checks = [c for task_checks in per_task for c in task_checks]
    if as_json:
        _emit_json([c.to_dict() for c in checks])
    else:
        terminal.print_mutants(checks)
    sys.exit(0 if all(c.ok for c in checks) else 1)


def _rebased_mutants(tasks: list, as_json: bool) -> None:
    from sb.mutant_rebase import rebase_task
    from sb.report import terminal
    reports = [rebase_task(task) for task in tasks]
    if as_json:
        _emit_json([r.to_dict() for r in reports])
    else:
        terminal.print_rebased(reports)
    sys.exit(0 if all(r.ok for r in reports) else 1)


def _generated_mutants(slugs, tier, isolation, jobs, executor_choice: tuple[str | None, str | None], as_json, show_id,
                       first_failure) -> None:
    from sb.checks import generated_for_task
    from sb.parallel import References
    from sb.report import terminal
    tasks = _tasks(slugs, tier=tier)
    if show_id:
        from sb.generated import mutant_diff
        if len(tasks) != 1:
            raise SbError("--show needs exactly one task slug")
        return click.echo(mutant_diff(tasks[0], show_id))
    sandbox = _sandbox(isolation, trusted=True)
    reports = []
    with _started_executor(*executor_choice, jobs, tasks, sandbox) as executor:
        references = References(executor)
        for task in tasks:
            reports.append(generated_for_task(task, executor, references, first_failure))
            if not as_json:
                terminal.print_generated_line(reports[-1])
    if as_json:
        _emit_json([r.to_dict() for r in reports])
    else:
        terminal.print_generated(reports)
    sys.exit(0 if all(r.ok for r in reports) else 1)


@cli.command()
@click.option("--model", "models", required=True, multiple=True,
              help="reference, starter, or a name an adapter claims (see `sb models`); repeat for a sweep of several")
@click.option("--tasks", "task_list", default="all", show_default=True, help="comma-separated slugs, or all")
@click.option("--suite", default=None)
@click.option("--tier", type=TIER, default=None, help="default: all tiers of the chosen tasks")
@click.option("--set", "set_name", default=None)
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="keep each task's working directory here")
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True)
@click.option("--isolation", default=None, help=ISOLATION_HELP)
@click.option("--base-url", default=None, help="for OpenAI-compatible servers")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="N independent draws, one results file each (never retries)")
@click.option("--resume", is_flag=True, help="continue the unfinished sweep run with the same command line")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help=JOBS_HELP)
@click.option("--concurrency", type=click.IntRange(min=1), multiple=True,
              help="up to N model calls at once, per model (default 1); once per --model to set each its own")
@_with_options(_executor_options)
@click.option("--temperature", type=float, default=None, help="sampling temperature (unset: not sent)")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="output token limit "
                   "(unset: not sent, or the adapter's documented default where the API requires one)")
@click.option("--thinking-budget", type=click.IntRange(min=1), default=None,
              help="thinking tokens (anthropic; unset: not sent)")
@click.option("--effort", default=None, help="reasoning effort, e.g. low, medium, high (unset: not sent)")
@click.option("--seed", type=int, default=None, help="sampling seed (openai, openai-compatible; unset: not sent)")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="seconds one model request may take in all, retries and waits included "
                   "(a tool loop: per turn; cmd: in all); default 600")
@click.option("--retry-after-cap", "retry_after_cap_s", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="the longest retry-after a model API may ask for: "
                   "a longer one ends the attempt as adapter_error; default 60")
@click.option("--report", "report_specs", multiple=True, metavar="NAME[:ARG]",
              help="also publish the run through this reporter, e.g. inspect:DIR (Inspect eval logs); repeatable")
@click.option("--json", "as_json", is_flag=True, help="print the results document(s)")
def run(models, task_list, suite, tier, set_name, keep, results_dir, isolation, base_url, repeat, resume, jobs,
        concurrency, executor_name, address, temperature, max_tokens, thinking_budget, effort, seed, timeout_s,
        retry_after_cap_s, report_specs, as_json):
    """Let each model attempt every chosen task once, grade each, write a results file per draw."""
    from sb.models.base import ModelOptions
    from sb.parallel import default_jobs
    from sb.run import Sweep, run_sweeps
    from sb import inputs
    chosen = _chosen_models(models, concurrency)
    slugs = inputs.task_selection(task_list)
    tasks = _tasks(slugs, suite=suite, tier=tier or "all", set_name=set_name, names_must_match=True)
    if not tasks:
        raise SbError("no task matches the selection")
    inputs.finite("--temperature", temperature)
    inputs.finite("--retry-after-cap", retry_after_cap_s)
    inputs.writable_dir(results_dir, "--results")
    if keep is not None:
        inputs.writable_dir(keep, "--keep")
        if not resume:
            inputs.no_kept_folders(keep, [task.slug for task in tasks])
    from sb.reporters import RunReporters
    reporting = RunReporters(report_specs, _pm(), keep)  # a bad --report stops here, before any model call
    sandbox = _sandbox(isolation, trusted=all(adapter.trusted for adapter, _, _ in chosen))
    knobs = {"temperature": temperature, "max_tokens": max_tokens, "thinking_budget": thinking_budget,
             "effort": effort, "seed": seed, "timeout_s": timeout_s, "retry_after_cap_s": retry_after_cap_s}
    options = ModelOptions(base_url=base_url, settings={k: v for k, v in knobs.items() if v is not None})
    options.timeout_s = timeout_s or options.timeout_s
    _refuse_settings_no_model_uses(options.settings, [adapter for adapter, _, _ in chosen])
    for adapter, model_id, _ in chosen:
        if base_url and not adapter.uses_base_url:
            raise SbError(f"--base-url is not used by the {adapter.name} adapter ({adapter.name}:{model_id} calls "
                          "no server); drop it, or name a model served there (openai-compatible:MODEL)")
        adapter.preflight(model_id, options)
    sweeps = [Sweep(tasks, adapter, model_id, sandbox, options, results_dir, reporting.keep_dir,
                    _recorded_set(slugs, suite, tier, set_name), jobs=jobs or default_jobs(), concurrency=limit,
                    draws=repeat) for adapter, model_id, limit in chosen]
    from sb.report import terminal
    progress = None if as_json else terminal.progress_printer(sum(len(s.tasks) * s.draws for s in sweeps))
    if resume:
        _check_something_to_resume(sweeps)
    try:
        with _started_executor(executor_name, address, jobs, tasks, sandbox) as executor:
            runs = run_sweeps(sweeps, on_task=reporting.watch(progress, tasks), resume=resume, executor=executor,
                              on_resume=_say_what_resumes, on_phase=progress.phase if progress else None)
    finally:
        if progress:
            progress.close()
    if as_json:
        _emit_json([doc for doc, _ in runs] if len(runs) > 1 else runs[0][0])
    else:
        for doc, path in runs:
            terminal.print_run_table(doc)
            terminal.print_results_written(path)
    for warning in reporting.notify(runs, on_written=None if as_json else terminal.print_reported):
        terminal.print_warning(warning)
    from sb.outcome import HARNESS_FAILURES
    harness_failed = any(e["status"] in HARNESS_FAILURES for doc, _ in runs for e in doc["tasks"])
    nothing = _nothing_measured([e for doc, _ in runs for e in doc["tasks"]])
    if nothing:
        terminal.print_error(nothing)
    sys.exit(1 if harness_failed or nothing else 0)


def _check_something_to_resume(sweeps: list) -> None:
    """--resume refuses when nothing is unfinished: starting afresh silently would ask the
    model again for every task a user thinks is done."""
    from sb.run import find_unfinished
    for sweep in sweeps:
        if not find_unfinished(sweep):
            raise SbError(f"--resume: nothing to resume for {sweep.adapter.name}:{sweep.model} in {sweep.results_dir} "
                          "(no unfinished sweep of this command line); run without --resume to start one")


def _say_what_resumes(sweeps: list) -> None:
    """One line per sweep: which unfinished sweep --resume continues, and what it kept."""
    from sb.report.terminal import print_note
    from sb.run import find_unfinished
    for sweep in sweeps:
        unfinished = find_unfinished(sweep)
        done = sum(len(d["tasks"]) for d in unfinished)
        kept = sum(len(d.get("received", {})) for d in unfinished)
        print_note(f"resuming sweep {sweep.group_id} ({sweep.adapter.name}:{sweep.model}): "
                   f"{done} task(s) graded, {kept} answer(s) kept to grade, {len(unfinished)} unfinished draw(s)")


def _chosen_models(models: tuple, limits: tuple) -> list:
    """(adapter, model id, concurrency) per --model: one --concurrency for all, or one each."""
    from sb import inputs
    from sb.models.base import resolve_model
    if limits and len(limits) not in (1, len(models)):
        raise SbError(f"--concurrency given {len(limits)} times for {len(models)} --model: "
                      "give it once, or once per model")
    if len(set(models)) != len(models):
        raise SbError("a --model is named twice")
    limits = limits if len(limits) == len(models) else (limits or (1,)) * len(models)
    return [(*resolve_model(inputs.model_name(name), _pm()), limit) for name, limit in zip(models, limits)]


def _nothing_measured(entries: list) -> str:
    """One line when no task of the run produced evidence, saying why; else ''."""
    from collections import Counter
    from sb.outcome import is_evidence
    if not entries or any(is_evidence(e["status"]) for e in entries):
        return ""
    reasons = Counter(e["status"] for e in entries)
    why = ", ".join(f"{n} {status}" for status, n in sorted(reasons.items()))
    first = next((e.get("detail") for e in entries if e.get("detail")), "")
    return f"nothing was measured ({why})" + (f": {first.splitlines()[0][:200]}" if first else "")


@cli.command()
@click.argument("slug")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--isolation", default=None, help=ISOLATION_HELP)
@click.option("--json", "as_json", is_flag=True)
def grade(slug, directory, isolation, as_json):
    """Grade DIRECTORY as a solver's output for task SLUG."""
    from sb.grading.early import remember_judge, same_sandbox, start_judge_early
    early = start_judge_early(slug, isolation)  # while the plugins load below
    from sb.api import grade_files
    from sb.solver_output import read_solver_output
    task = _task(slug)
    sandbox = same_sandbox(early, _sandbox(isolation, trusted=False))
    output = read_solver_output(directory, task.starter_files)
    if not output.files and not output.problems:
        raise SbError(f"{directory} holds none of {slug}'s files ({', '.join(sorted(task.starter_files)[:5])}): "
                      "nothing to grade")
    outcome = output.annotate(grade_files(task, output.files, sandbox))
    if as_json:
        data = outcome.to_dict()
        _emit_json({k: data[k] for k in ("slug", "status", "passed", "counts", "failed_tests", "detail",
                                           "duration_s", "isolation", "dropped_files")})
    else:
        from sb.report.terminal import print_grade
        print_grade(outcome)
    remember_judge(task, sandbox)  # the next `sb grade` of this task starts it first (sb/entry.py)
    sys.exit(1 if outcome.status.value in ("collection_error", "harness_error", "device_stall") else 0)


@cli.command()
@click.argument("slug")
@click.argument("dest", type=click.Path(file_okay=False, path_type=Path))
@click.option("--reference", is_flag=True, help="export the reference instead of the starter")
@click.option("--mutant", default=None, help="export this mutant as a solver would leave it")
@click.option("--prompt", "with_prompt", is_flag=True,
              help="also write prompt.md, what a solver is shown (sb grade drops it: it is not a declared file)")
@click.option("--json", "as_json", is_flag=True)
def export(slug, dest, reference, mutant, with_prompt, as_json):
    """Write the starter (default), the reference or a mutant into DEST."""
    from sb.grading import write_files
    task = _task(slug)
    if reference and mutant:
        raise SbError("choose one of --reference and --mutant")
    from sb.inputs import writable_dir
    names = [entry.name[:-len(".patch")] for entry in task.mutant_entries()] if mutant else []
    if mutant and mutant not in names:
        raise SbError(f"{slug} has no mutant {mutant!r}; its mutants: {', '.join(names) or 'none'}")
    files = task.reference_files if reference else (
        task.mutant_solution(task.mutant(mutant)) if mutant else task.starter_files)
    chosen = {k: v for k, v in files.items() if k in task.starter_files}
    if with_prompt:
        if "prompt.md" in chosen:
            raise SbError(f"{slug} declares a file named prompt.md: --prompt would overwrite it")
        chosen["prompt.md"] = task.prompt.encode("utf-8")
    writable_dir(dest, "DEST")
    write_files(dest, chosen)
    if as_json:
        return _emit_json({"slug": slug, "dest": str(dest), "files": sorted(chosen),
                           "what": "reference" if reference else f"mutant {mutant}" if mutant else "starter"})
    click.echo(f"wrote {len(chosen)} file(s) to {dest}")


@cli.command("diff")
@click.argument("slug")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--description", "-m", required=True, help="one line: the mistake this wrong version makes")
@click.option("--survives", "reason", default=None, metavar="REASON",
              help="the mutant is expected to survive, for this reason (default: expected caught)")
@click.option("--output", "-o", "output_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="write the patch to this file (replaced whole, and only when the patch is made) instead of stdout")
@click.option("--json", "as_json", is_flag=True)
def diff_cmd(slug, directory, description, reason, output_path, as_json):
    """Print DIRECTORY's declared files as a mutant patch of SLUG's reference.

    Save it as the task's mutants/NAME.patch with -o (docs/task-format.md): a shell's
    redirect would leave an empty file there when the patch cannot be made.
    """
    from sb.mutant_patch import PatchError, make_patch
    from sb.solver_output import read_solver_output
    if not description.strip() or (reason is not None and not reason.strip()):
        raise SbError("--description and --survives each need words: what this version does wrong, why it survives")
    task = _task(slug)
    output = read_solver_output(directory, task.starter_files)
    if output.problems:
        raise SbError(f"{directory}: {'; '.join(output.problems)}")
    try:
        text = make_patch("survives" if reason else "caught", description, task.reference_files,
                          output.files, reason or "")
    except PatchError as exc:
        raise SbError(f"{directory}: {exc}") from None
    if output_path is not None:
        _write_patch(output_path, text)
    if as_json:
        return _emit_json({"slug": slug, "patch": text, "output": str(output_path) if output_path else None})
    if output_path is None:
        click.echo(text, nl=False)


def _write_patch(path: Path, text: str) -> None:
    from sb.inputs import writable_dir
    from sb.results import write_text_atomic
    if path.suffix != ".patch":
        raise SbError(f"{path}: a mutant patch is saved as mutants/NAME.patch")
    writable_dir(path.parent, "--output's folder")
    write_text_atomic(path, text, mode=path.stat().st_mode & 0o777 if path.is_file() else 0o644)


REPORT_MODES = ("last", "variance", "failures", "html", "drift", "inspect")


@cli.command()
@click.option("--last", is_flag=True, help="the newest results file in --results")
@click.option("--variance", is_flag=True, help="per task k of N across draws, the pass rate's spread and interval")
@click.option("--failures", "failures_slug", default=None, metavar="SLUG",
              help="which test ids of SLUG fail across draws, grouped by identical signature")
@click.option("--html", "html_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="write the static leaderboard site into this folder")
@click.option("--drift", is_flag=True, help="public against holdout pass rates per model, flagging contamination")
@click.option("--inspect", "inspect_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="write each published draw as an Inspect eval log into this folder (inspect view)")
@click.option("--model", default=None, help="--variance / --failures: only this model's draws")
@click.option("--by-group", is_flag=True, help="--variance: one block per sweep (group id) instead of per model")
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True, help="the draws --last, --variance, --failures read")
@click.option("--leaderboard", "leaderboard_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("leaderboard"), show_default=True, help="the published results the leaderboard reads")
@click.option("--json", "as_json", is_flag=True)
def report(last, variance, failures_slug, html_dir, drift, inspect_dir, model, by_group, results_dir, leaderboard_dir,
           as_json):
    """The leaderboard of published results, newest first; or --last, --variance, --failures, --html, --drift,
    --inspect."""
    chosen = [m for m, on in zip(REPORT_MODES, (last, variance, failures_slug, html_dir, drift, inspect_dir)) if on]
    if len(chosen) > 1:
        raise SbError(f"choose one of --{', --'.join(chosen)}")
    mode = chosen[0] if chosen else "leaderboard"
    _warn_about_toolchains(leaderboard_dir if mode in ("leaderboard", "html", "inspect") else results_dir)
    data = _REPORTS[mode](results_dir=results_dir, leaderboard_dir=leaderboard_dir, slug=failures_slug,
                          model=model, by_group=by_group, html_dir=html_dir, inspect_dir=inspect_dir)
    if as_json:
        return _emit_json({k: v for k, v in data.items() if k != "_path"} if isinstance(data, dict) else data)
    from sb.report import terminal
    getattr(terminal, f"print_{mode}")(data)
    if mode == "leaderboard":
        terminal.print_speed_summaries(_speed_summaries(results_dir, leaderboard_dir))
        from sb.catalog import task_row
        terminal.print_screens([task_row(t) for t in _tasks() if not t.meta.holdout])


def _warn_about_toolchains(folder) -> None:
    from sb.report.draws import load_dir, toolchain_note
    if Path(folder).is_dir():
        note = toolchain_note(load_dir(folder))
        if note:
            from sb.report.terminal import print_warning
            print_warning(note)


def _speed_summaries(*folders) -> list:
    """`sb speed` runs kept beside the correctness results, for the same report."""
    from sb.speed.results import summaries
    return [s for folder in folders if Path(folder).is_dir() for s in summaries(folder)]


def _report_last(results_dir, **_):
    from sb import results
    path = results.newest(results_dir)
    if path is None:
        raise SbError(f"no results in {results_dir} (run `sb run` first)")
    return {**results.load(path), "_path": str(path)}


def _report_leaderboard(leaderboard_dir, **_):
    from sb.report.leaderboard import leaderboard
    return leaderboard(leaderboard_dir)


def _draws(results_dir, model):
    from sb.report.draws import load_dir, of_model
    docs = load_dir(results_dir)
    if not docs:
        raise SbError(f"no finished draws in {results_dir} (run `sb run` first)")
    return of_model(docs, model) if model else docs


def _report_variance(results_dir, model, by_group, **_):
    from sb.report.variance import variance
    return variance(_draws(results_dir, model), "group_id" if by_group else "model")


def _report_failures(results_dir, model, slug, **_):
    from sb.report.failures import failure_shape
    return {"slug": slug, "models": failure_shape(_draws(results_dir, model), slug)}


def _report_html(leaderboard_dir, html_dir, **_):
    from sb.inputs import writable_dir
    from sb.report.html import build_site
    writable_dir(html_dir, "--html")
    return {"site": str(html_dir), **build_site(leaderboard_dir, html_dir)}


def _report_drift(results_dir, **_):
    from sb.report.draws import load_dir
    from sb.report.drift import drift
    return drift(load_dir(results_dir))


def _report_inspect(leaderboard_dir, inspect_dir, **_):
    from sb.inputs import writable_dir
    from sb.report.inspect_log import write_logs
    writable_dir(inspect_dir, "--inspect")
    return write_logs(leaderboard_dir, inspect_dir)


_REPORTS = {"last": _report_last, "leaderboard": _report_leaderboard, "variance": _report_variance,
            "failures": _report_failures, "html": _report_html, "drift": _report_drift, "inspect": _report_inspect}


@cli.command()
@click.argument("model_a")
@click.argument("model_b")
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True)
@click.option("--json", "as_json", is_flag=True)
def compare(model_a, model_b, results_dir, as_json):
    """Two models on the same tasks: per-task counts and an exact paired test."""
    from sb.report.compare import compare as compare_models
    from sb.report.draws import load_dir
    if model_a == model_b:
        raise SbError(f"compare needs two different models; both are {model_a!r}")
    data = compare_models(load_dir(results_dir), model_a, model_b)
    if as_json:
        return _emit_json(data)
    from sb.report.terminal import print_compare
    print_compare(data)


@cli.command()
@click.argument("results_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--leaderboard", "leaderboard_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("leaderboard"), show_default=True)
@click.option("--allow-endpoint", is_flag=True,
              help="publish a run answered by another endpoint than the provider's API (shown on the leaderboard)")
@click.option("--allow-agent", is_flag=True,
              help="publish a run answered by a cmd: agent, which ran unsandboxed (shown on the leaderboard)")
@click.option("--json", "as_json", is_flag=True)
def publish(results_file, leaderboard_dir, allow_endpoint, allow_agent, as_json):
    """Copy a finished results file into the leaderboard, refusing a cost that does not re-derive."""
    from sb.inputs import writable_dir
    from sb.report.publish import publish as publish_file
    writable_dir(leaderboard_dir, "--leaderboard")
    data = publish_file(results_file, leaderboard_dir, allow_endpoint, allow_agent)
    if as_json:
        return _emit_json(data)
    from sb.report.terminal import print_published
    print_published(data)


@cli.command("new")
@click.argument("slug")
@click.option("--dir", "parent", type=click.Path(file_okay=False, path_type=Path), default=Path("tasks"),
              show_default=True, help="where to create the package folder")
@click.option("--json", "as_json", is_flag=True)
def new_task(slug, parent, as_json):
    """Create a task package SLUG that validates out of the box (docs/writing-a-task.md)."""
    from sb.inputs import writable_dir
    from sb.scaffold import create
    writable_dir(parent, "--dir")
    dest = create(slug, parent)
    if as_json:
        return _emit_json({"slug": slug, "path": str(dest)})
    click.echo(f"created {dest}: pip install -e {dest} && sb validate {slug}")


@cli.command("env")
@click.option("--json", "as_json", is_flag=True)
def env_cmd(as_json):
    """The grading environment and its toolchain fingerprint (compare two machines' fingerprints)."""
    from sb.toolchain import document, fingerprint
    doc = {"fingerprint": fingerprint(), **document()}
    if as_json:
        return _emit_json(doc)
    from sb.report.terminal import print_env
    print_env(doc)


@cli.command()
@click.option("--json", "as_json", is_flag=True)
def models(as_json):
    """List every registered model adapter."""
    from sb.plugins import collect
    pm = _pm()
    registry = collect(pm, "register_models", "model adapter", lambda a: a.name)
    rows = [{"name": n, "routes": a.routes, "extra": a.extra, "installed": a.installed(),
             "source": registry.sources[n]} for n, a in registry.items.items()]
    if as_json:
        return _emit_json(rows)
    from sb.report.terminal import print_models
    print_models(rows)


def main(argv=None) -> None:
    """Entry point: every SbError and usage error becomes one line on stderr and exit 2.
    Ctrl-C and SIGTERM stop everything at once (sb.interrupt); a closed stdout stops the
    printing, never the work."""
    from sb import interrupt
    from sb.report.stdout import guard_stdout
    interrupt.install()
    guard_stdout()
    from sb.session import start_new_session
    start_new_session()  # one session per command, also when main() is called again in one process
    try:
        cli.main(args=argv, prog_name="sb", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:
        _fail(exc.format_message())
    except SbError as exc:
        _fail(str(exc), exc.exit_code)
    sys.exit(0)


def _fail(message: str, code: int = 2) -> None:
    from sb.report.terminal import print_error
    print_error(message.splitlines()[0] if message else "error")
    sys.exit(code)


from sb.speed.command import speed as _speed  # noqa: E402  (light: imports only click)

cli.add_command(_speed)

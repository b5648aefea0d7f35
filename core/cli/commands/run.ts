/**
 * `panoptes run`: create a run and drive it to the end in this process, with live progress;
 * print per-model calls, tokens and estimated cost (or one JSON object with --json).
 * Runs on: Node (core).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { PanoptesError, type EndWithFailures, type PrivacyMode, type ReasoningEffort } from '../../domain.js';
import type { WorkerListener } from '../../remote/listener.js';
// Light (node:fs only): `--listen` is parsed while the command is defined.
import { loadServerTls, parsePort } from '../../remote/transport-options.js';
import type { Engine } from '../../service/engine.js';
import { orderSeed, share } from './decide.js';
import { unscoredLines } from './score.js';
import { EXIT, addCallConcurrencyOption, addCallingOptions, handedOverLine, parsePositiveInt, reportError, type PosingOptions, addScoringOptions } from '../common.js';

interface RunCliOptions extends PosingOptions {
  name?: string;
  endWithFailures?: EndWithFailures;
  manifest: string;
  models: string;
  epochs: number;
  concurrency?: number;
  privacy?: PrivacyMode;
  skipPromptCache?: boolean;
  shareCacheAcrossEpochs?: boolean;
  probe?: boolean;
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  reasoningEffort?: ReasoningEffort;
  thinkingBudget?: number;
  json?: boolean;
  progress: boolean;
  listen?: number;
  listenHost?: string;
  token?: string;
  tlsCert?: string;
  tlsKey?: string;
  local: boolean;
  waitForWorkers?: number;
  scorers?: string;
  template?: string;
  untilDecided?: boolean;
  orderSeed?: number;
  batch?: number;
  alpha?: number;
  margin?: number;
  decideScorer?: string;
  maxCalls?: number;
}

export function registerRunCommand(program: Command): void {
  addScoringOptions(addCallConcurrencyOption(addCallingOptions(
    program
      .command('run')
      .description('create a run and drive it to the end in this process')
      .requiredOption('--manifest <file>', 'JSONL manifest: one {"id", "prompt"} per line')
      .requiredOption('--models <list>', 'comma-separated logical model ids from the catalog')
      .option('--epochs <n>', 'times to pose every vignette to every model', parsePositiveInt('--epochs'), 1)
      .option('--concurrency <n>', 'jobs in flight at once (default 4)', parsePositiveInt('--concurrency'))
      .option('--privacy <mode>', 'strict | fallback | off (default strict)')
      .option('--skip-prompt-cache', 'neither read nor write the prompt cache; the run\'s records are kept as always')
      .option('--share-cache-across-epochs', 'let the prompt cache answer later epochs with earlier ones')
      .option('--end-with-failures <status>', 'how a run with vignettes given up on ends: failed (default) or done')
      .option('--probe', 'probe every host of the models first (one 16-token call each); refuse the run if a model has no host left')
      .option('--temperature <t>', 'sampling temperature', Number)
      .option('--max-tokens <n>', 'maximum output tokens per call', parsePositiveInt('--max-tokens'))
      .option('--seed <n>', 'sampling seed', Number)
      .option('--reasoning-effort <level>', 'low | medium | high: sent to OpenAI-compatible hosts as reasoning_effort')
      .option('--thinking-budget <tokens>', 'tokens an Anthropic model may think (>= 1024): sent as thinking.budget_tokens', parsePositiveInt('--thinking-budget'))
      .option('--scorers <file>', 'a scoring file (JSON or YAML): score each record as it lands')
      .option('--template <file-or-name>', 'a staged template (YAML) or a built-in\'s name (repo_audit, panel_debate, design_doc, redteam): pose each vignette through its stages')
      .option('--until-decided', 'pose the vignettes in a seeded order, a batch at a time, only to models still in contention; stop when every pair is decided (needs --scorers)')
      .option('--order-seed <n>', 'with --until-decided: the order\'s seed (default 1; --seed is sampling\'s)', orderSeed('--order-seed'))
      .option('--batch <n>', 'with --until-decided: vignettes between two looks (default 10)', parsePositiveInt('--batch'))
      .option('--alpha <a>', 'with --until-decided: the chance of any wrong decision, split over the pairs (default 0.05)', share('--alpha'))
      .option('--margin <d>', 'with --until-decided: stop a pair as equivalent once its interval lies inside ±d (default 0: never)', share('--margin'))
      .option('--max-calls <n>', 'with --until-decided: a budget of the sweep\'s calls; no batch opens that would pass it', parsePositiveInt('--max-calls'))
      .option('--decide-scorer <name>', 'with --until-decided: the scorer the pairs are decided on (default: the file\'s first)')
      .option('--name <text>', 'what to call the run in lists and headers (editable later in the app)')
      .option('--json', 'print one JSON summary object instead of a table')
      .option('--no-progress', 'no live progress')
      .option('--listen <port>', 'accept `panoptes worker` connections on this port (0: any free port)', (v: string) => parsePort(v, '--listen'))
      .option('--listen-host <addr>', 'address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)')
      .option('--token <token>', 'the token workers must present (default: $PANOPTES_WORKER_TOKEN)')
      .option('--tls-cert <file>', 'serve workers over TLS with this certificate (PEM)')
      .option('--tls-key <file>', 'and this private key (PEM)')
      .option('--no-local', 'run no jobs in this process: only remote workers do (needs --listen)')
      .option('--wait-for-workers <seconds>', 'how long a job waits for a worker serving its model (default 30 with --no-local)', parsePositiveInt('--wait-for-workers')),
  ))).action(async (opts: RunCliOptions, cmd: Command) => {
    cmd.setOptionValue('exit', await runCommand(opts));
  });
}

async function runCommand(opts: RunCliOptions): Promise<number> {
  let engine: Engine | undefined;
  let listener: WorkerListener | undefined;
  try {
    if (opts.listen === undefined && !opts.local) throw new PanoptesError('invalid_input', '--no-local needs --listen: no worker could run the jobs', { where: '--no-local' });
    const untilDecided = untilDecidedOf(opts);
    const [{ openCliEngine }, { readScoringFile }, { driveRun }, { printRunResult, runSummaryJson }, { formatScoreReport }, { formatDecision }] =
      await Promise.all([
        import('../open-engine.js'),
        import('../scoring-file.js'),
        import('../drive-run.js'),
        import('../run-output.js'),
        import('../../scoring/format-report.js'),
        import('../../scoring/format-decision.js'),
      ]);
    engine = openCliEngine(opts, {
      local: opts.local,
      callConcurrency: opts.callConcurrency,
      ...(opts.waitForWorkers === undefined ? {} : { waitForWorkerMs: opts.waitForWorkers * 1000 }),
    });
    if (opts.listen !== undefined) {
      const token = opts.token ?? process.env.PANOPTES_WORKER_TOKEN;
      if (!token) throw new PanoptesError('invalid_input', '--listen needs a worker token: --token or $PANOPTES_WORKER_TOKEN', { where: '--token' });
      const tls = loadServerTls(opts.tlsCert, opts.tlsKey);
      // Loaded only with --listen: a run on this process's own workers opens no listener.
      const { startWorkerListener } = await import('../../remote/listener.js');
      listener = await startWorkerListener(engine, { port: opts.listen, token, ...(opts.listenHost ? { host: opts.listenHost } : {}), ...(tls ? { tls } : {}) });
      process.stderr.write(`listening for workers on ${listener.host}:${listener.port}${listener.tls ? ' (TLS)' : ''}\n`);
    }
    const sampling = {
      temperature: opts.temperature,
      maxTokens: opts.maxTokens,
      seed: opts.seed,
      reasoningEffort: opts.reasoningEffort,
      thinkingBudget: opts.thinkingBudget,
    };
    const scorers = opts.scorers === undefined ? undefined : await readScoringFile(opts.scorers);
    // A file's text is sent as the template (its errors then name lines of it); anything else is a built-in's name.
    const template = opts.template === undefined ? undefined : existsSync(opts.template) ? readFileSync(opts.template, 'utf8') : opts.template;
    // Checked here first so that an error names the file's line; the engine checks it again.
    if (template !== undefined) (await import('../../templates/template-file.js')).templateFrom(template, opts.template!);
    const run = await engine.service.createRun({
      manifestPath: opts.manifest,
      models: opts.models.split(',').map((m) => m.trim()).filter(Boolean),
      epochs: opts.epochs,
      concurrency: opts.concurrency,
      privacy: opts.privacy,
      ...(opts.skipPromptCache ? { skipPromptCache: true } : {}),
      ...(opts.shareCacheAcrossEpochs ? { shareCacheAcrossEpochs: true } : {}),
      endWithFailures: opts.endWithFailures,
      ...(opts.probe ? { probe: true } : {}),
      ...(Object.keys(sampling).length > 0 ? { sampling } : {}),
      ...(scorers ? { scorers } : {}),
      ...(template === undefined ? {} : { template }),
      ...(opts.name === undefined ? {} : { name: opts.name }),
      ...(untilDecided ? { untilDecided } : {}),
    });
    if (!opts.json) process.stderr.write(`run ${run.id}: ${run.jobCount} jobs, ${untilDecided ? 'at most ' : ''}${run.vignetteCount * run.jobCount} calls\n`);
    const final = await driveRun(engine, run.id, opts.progress && !opts.json);
    if (engine.lostRun(run.id)) {
      process.stderr.write(handedOverLine(run.id));
      return EXIT.handedOver;
    }
    // A run posed until decided says where each pair was decided and what it saved (the same shape as `decide --json`).
    const decision = untilDecided && final.status === 'done' ? await engine.service.decide({ runId: run.id }) : undefined;
    if (opts.json) process.stdout.write(JSON.stringify({ ...(await runSummaryJson(engine, final)), ...(decision ? { decision } : {}) }) + '\n');
    else {
      await printRunResult(engine, final);
      if (decision) process.stdout.write('\n' + formatDecision(decision).join('\n') + '\n');
      // A scored run ends with the report of every scorer of its file, in the file's order.
      for (const scorer of scorers?.scorers ?? []) {
        process.stdout.write('\n' + formatScoreReport(await engine.service.report({ runId: run.id, scorer: scorer.name })).join('\n') + '\n');
      }
    }
    // A scorer that could not score (a judge without its key) fails the command, named, whatever the sweep did.
    const unscored = scorers ? unscoredLines(await engine.service.scoringStatus({ runId: run.id })) : [];
    for (const line of unscored) process.stderr.write(line);
    return final.status === 'done' && unscored.length === 0 ? EXIT.ok : EXIT.failed;
  } catch (err) {
    return reportError(err);
  } finally {
    await engine?.close();
    await listener?.close();
  }
}

/** The `createRun` settings of --until-decided; its flags without it, or with --no-local, are refused naming the flag. */
function untilDecidedOf(opts: RunCliOptions) {
  const given = (['orderSeed', 'batch', 'alpha', 'margin', 'decideScorer', 'maxCalls'] as const).filter((k) => opts[k] !== undefined);
  if (!opts.untilDecided) {
    const flag = given[0] === undefined ? undefined : `--${given[0].replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}`;
    if (flag) throw new PanoptesError('invalid_input', `${flag} goes with --until-decided`, { where: flag });
    return undefined;
  }
  if (!opts.local) {
    throw new PanoptesError('invalid_input', '--until-decided runs on this process\'s own workers (its batches wait for the decision between them): drop --no-local', { where: '--no-local' });
  }
  if (opts.scorers === undefined) throw new PanoptesError('invalid_input', '--until-decided needs --scorers: the pairs are decided on a scorer', { where: '--scorers' });
  return {
    ...(opts.decideScorer === undefined ? {} : { scorer: opts.decideScorer }),
    ...(opts.orderSeed === undefined ? {} : { orderSeed: opts.orderSeed }),
    ...(opts.batch === undefined ? {} : { batch: opts.batch }),
    ...(opts.alpha === undefined ? {} : { alpha: opts.alpha }),
    ...(opts.margin === undefined ? {} : { margin: opts.margin }),
    ...(opts.maxCalls === undefined ? {} : { maxCalls: opts.maxCalls }),
  };
}


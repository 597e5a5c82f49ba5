// OpenLLMetry JS (npm `@traceloop/node-server-sdk`) fixtures: its entity wrappers around a
// plain-code agent, as ../openllmetry.py does with the Python SDK's decorators.
//
// `withWorkflow({ name: "support_agent" })` around the loop, `withTask({ name: "call_model" })`
// around each model call (the OpenAI client on the scripted model, `--base-url`), `withTool` around
// each tool; they write `traceloop.span.kind` and the call's `{"args", "kwargs"}` / return value as
// JSON in `traceloop.entity.input` / `output`. `traceloop.initialize` gets an in-memory exporter,
// and the spans are written as OTLP JSON lines (the OTLP JSON serializer, end-time order):
//
// - workflow_only.otlp.jsonl: no instrumented module, so only the wrappers' spans;
// - workflow_openai.otlp.jsonl: `instrumentModules: { openAI }` too (an `openai.chat` span in each
//   `call_model`).
//
// The SDK initialises once per process, so each variant runs in a child process of its own.
// Packages are loaded from NODE_PATH (the driver's node_modules, scripts/framework-fixtures).

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = (process.env.NODE_PATH || join(here, "node_modules")).split(":")[0];
const require = createRequire(join(resolve(modules), "noop.js"));
const spec = JSON.parse(readFileSync(join(here, "..", "scenarios.json"), "utf-8"));
const VARIANTS = ["workflow_only", "workflow_openai"];
const RESOURCE = {
  "service.name": "support-agent-demo",
  "service.version": "0.3.1",
  "deployment.environment.name": "fixtures",
};

function argsOf(argv) {
  const found = {};
  for (let i = 0; i < argv.length; i += 2) found[argv[i].replace(/^--/, "")] = argv[i + 1];
  if (!found.out || !found["base-url"]) throw new Error("usage: generate.mjs --out DIR --base-url URL");
  return found;
}

// scenarios.tool_text: the same data every generator's tools return.
function toolText(name, input) {
  const table = spec.data[name];
  const key = Object.keys(input)
    .sort()
    .map((k) => `${k}=${input[k]}`)
    .join(",");
  const value = !table ? { error: `unknown tool ${name}` } : key in table ? table[key] : { error: `nothing found for ${key}` };
  return typeof value === "string" ? value : JSON.stringify(value);
}

function otlpLines(spans, batchSize = 4) {
  const { JsonTraceSerializer } = require("@opentelemetry/otlp-transformer");
  const nanos = ([s, ns]) => BigInt(s) * 1000000000n + BigInt(ns);
  const ordered = [...spans].sort((a, b) => {
    const byEnd = nanos(a.endTime) - nanos(b.endTime);
    return byEnd !== 0n ? (byEnd < 0n ? -1 : 1) : Number(nanos(a.startTime) - nanos(b.startTime));
  });
  const lines = [];
  for (let i = 0; i < ordered.length; i += batchSize) {
    const bytes = JsonTraceSerializer.serializeRequest(ordered.slice(i, i + batchSize));
    lines.push(JSON.stringify(JSON.parse(Buffer.from(bytes).toString("utf-8"))));
  }
  return lines;
}

async function run(args, variant) {
  const traceloop = require("@traceloop/node-server-sdk");
  const { InMemorySpanExporter } = require("@opentelemetry/sdk-trace-base");
  const { default: OpenAI } = require("openai");
  const exporter = new InMemorySpanExporter();
  traceloop.initialize({
    appName: RESOURCE["service.name"],
    apiKey: "tl-scripted",
    baseUrl: "http://127.0.0.1:9",
    exporter,
    disableBatch: true,
    silenceInitializationMessage: true,
    traceloopSyncEnabled: false,
    resourceAttributes: RESOURCE,
    instrumentModules: variant === "workflow_openai" ? { openAI: OpenAI } : {},
  });
  const client = new OpenAI({ baseURL: args["base-url"], apiKey: "sk-scripted" });
  const specs = Object.entries(spec.tools).map(([name, d]) => ({ type: "function", function: { name, ...d } }));
  const callModel = (messages) =>
    traceloop.withTask({ name: "call_model" }, async (msgs) => {
      const reply = await client.chat.completions.create({ model: spec.model, messages: msgs, tools: specs });
      return reply.choices[0].message;
    }, [...messages]);
  const callTool = (name, input) => traceloop.withTool({ name }, async (arguments_) => toolText(name, arguments_), input);
  const supportAgent = (question) =>
    traceloop.withWorkflow({ name: "support_agent" }, async (q) => {
      const messages = [
        { role: "system", content: spec.system_prompt },
        { role: "user", content: q },
      ];
      for (;;) {
        const message = await callModel(messages);
        if (!message.tool_calls?.length) return message.content ?? "";
        messages.push(message);
        for (const call of message.tool_calls) {
          const result = await callTool(call.function.name, JSON.parse(call.function.arguments));
          messages.push({ role: "tool", tool_call_id: call.id, content: result });
        }
      }
    }, question);
  for (const scenario of spec.scenarios) {
    const text = await supportAgent(scenario.question);
    if (text.trim() !== scenario.steps.at(-1).text) {
      throw new Error(`${variant} ${scenario.name}: unexpected answer ${JSON.stringify(text)}`);
    }
  }
  await traceloop.forceFlush();
  const spans = exporter.getFinishedSpans();
  mkdirSync(args.out, { recursive: true });
  const path = join(args.out, `${variant}.otlp.jsonl`);
  writeFileSync(path, otlpLines(spans).map((line) => line + "\n").join(""));
  console.log(`openllmetry_js: ${path}: ${spans.length} spans`);
}

const args = argsOf(process.argv.slice(2));
if (args.variant) {
  await run(args, args.variant);
} else {
  for (const variant of VARIANTS) {
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...process.argv.slice(2), "--variant", variant], {
      stdio: "inherit",
    });
    if (child.status !== 0) process.exit(child.status ?? 1);
  }
}

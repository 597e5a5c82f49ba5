// The Vercel AI SDK (npm `ai`) fixtures' generator, shared by the v5 and v6 folders beside it.
//
// Runs the shared scenarios (scenarios.json) through the SDK's own agent loop, `generateText` and
// `streamText` with tools and a step limit, with its built-in telemetry on, against the scripted
// model (`--base-url`), and writes what the SDK's spans export as OTLP JSON lines: one file per
// entry point, each holding the five scenarios as five traces. The spans go through the real
// OpenTelemetry JS SDK (BasicTracerProvider, AsyncLocalStorage context) and the real OTLP JSON
// serializer, batched in end-time order, as a BatchSpanProcessor feeding a Collector would.
//
// Packages are loaded from NODE_PATH (the driver's node_modules, scripts/framework-fixtures),
// through require, because ESM imports do not search NODE_PATH.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = (process.env.NODE_PATH || join(here, "node_modules")).split(":")[0];
const require = createRequire(join(resolve(modules), "noop.js"));

const { generateText, streamText, tool, stepCountIs, jsonSchema } = require("ai");
const { createOpenAI } = require("@ai-sdk/openai");
const { context, trace } = require("@opentelemetry/api");
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks");
const { resourceFromAttributes } = require("@opentelemetry/resources");
const {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} = require("@opentelemetry/sdk-trace-base");
const { JsonTraceSerializer } = require("@opentelemetry/otlp-transformer");

const spec = JSON.parse(readFileSync(join(here, "scenarios.json"), "utf-8"));

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

// scenarios.tool_result: the same data every generator's tools return.
function toolResult(name, input) {
  const table = spec.data[name];
  if (!table) return { error: `unknown tool ${name}` };
  const key = Object.keys(input)
    .sort()
    .map((k) => `${k}=${input[k]}`)
    .join(",");
  return key in table ? table[key] : { error: `nothing found for ${key}` };
}

function tools() {
  const made = {};
  for (const [name, described] of Object.entries(spec.tools)) {
    made[name] = tool({
      description: described.description,
      inputSchema: jsonSchema(described.parameters),
      execute: async (input) => toolResult(name, input),
    });
  }
  return made;
}

function otlpLines(spans, batchSize = 4) {
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

export async function main({ model: pickModel, label }) {
  const args = argsOf(process.argv.slice(2));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(RESOURCE),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer("ai");
  const openai = createOpenAI({ baseURL: args["base-url"], apiKey: "sk-scripted" });
  const model = pickModel(openai, spec.model);
  const common = (scenario) => ({
    model,
    system: spec.system_prompt,
    prompt: scenario.question,
    tools: tools(),
    stopWhen: stepCountIs(5),
    experimental_telemetry: { isEnabled: true, functionId: "support-agent", tracer },
  });
  mkdirSync(args.out, { recursive: true });
  const runs = {
    generate_text: async (scenario) => (await generateText(common(scenario))).text,
    stream_text: async (scenario) => {
      const result = streamText(common(scenario));
      let text = "";
      for await (const part of result.textStream) text += part;
      return text;
    },
  };
  for (const [entry, run] of Object.entries(runs)) {
    for (const scenario of spec.scenarios) {
      const text = await run(scenario);
      if (text.trim() !== scenario.steps.at(-1).text) {
        throw new Error(`${entry} ${scenario.name}: unexpected answer ${JSON.stringify(text)}`);
      }
    }
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const path = join(args.out, `${entry}.otlp.jsonl`);
    writeFileSync(path, otlpLines(spans).map((line) => line + "\n").join(""));
    exporter.reset();
    console.log(`${label}: ${path}: ${spans.length} spans`);
  }
  await provider.shutdown();
}

// LangSmith JS SDK (npm `langsmith`) fixtures: the ingest bodies its client sends, captured.
//
// A small tool-calling agent runs each scenario against the scripted model (`--base-url`): the
// OpenAI client wrapped by `wrapOpenAI` (an llm run per model call), each tool a
// `traceable(..., { run_type: "tool" })` function, the loop a `traceable` chain. The client's
// endpoint is a local stand-in for the LangSmith API (below, as ../langsmith_capture.py does for
// Python) that keeps the request bodies it receives:
//
// - batch.jsonl: `/info` says `use_multipart_endpoint: false`, so the client posts
//   `{"post": [...], "patch": [...]}` to `/runs/batch` (one body per line);
// - multipart.multipart: the default, `multipart/form-data` to `/runs/multipart`, one body after
//   another (each run's `inputs` / `outputs` in parts of their own).
//
// Packages are loaded from NODE_PATH (the driver's node_modules, scripts/framework-fixtures).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const modules = (process.env.NODE_PATH || join(here, "node_modules")).split(":")[0];
const require = createRequire(join(resolve(modules), "noop.js"));

const { Client } = require("langsmith");
const { traceable } = require("langsmith/traceable");
const { wrapOpenAI } = require("langsmith/wrappers");
const { default: OpenAI } = require("openai");

const spec = JSON.parse(readFileSync(join(here, "..", "scenarios.json"), "utf-8"));

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

// The stand-in for the LangSmith API: answers /info, keeps every /runs/* body.
async function captureServer(multipart) {
  const bodies = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      let data = Buffer.concat(chunks);
      if ((req.headers["content-encoding"] || "") === "gzip") data = gunzipSync(data);
      if (req.method === "GET" && req.url.startsWith("/info")) {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            version: "0.10.0",
            batch_ingest_config: { use_multipart_endpoint: multipart, size_limit: 100, size_limit_bytes: 20971520 },
            instance_flags: {},
          }),
        );
        return;
      }
      if (req.method === "POST" && /\/runs\/(batch|multipart)$/.test(req.url)) {
        bodies.push({ path: req.url, contentType: req.headers["content-type"] || "", data });
      }
      res.writeHead(202, { "Content-Type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { server, bodies, url: `http://127.0.0.1:${server.address().port}` };
}

function write(out, stem, bodies) {
  mkdirSync(out, { recursive: true });
  const json = bodies.every((b) => b.contentType.startsWith("application/json"));
  const path = join(out, `${stem}.${json ? "jsonl" : "multipart"}`);
  const parts = json
    ? bodies.map((b) => Buffer.from(JSON.stringify(JSON.parse(b.data.toString("utf-8"))) + "\n"))
    : bodies.map((b) => (b.data.at(-1) === 10 ? b.data : Buffer.concat([b.data, Buffer.from("\r\n")])));
  writeFileSync(path, Buffer.concat(parts));
  console.log(`langsmith_js: ${path}: ${bodies.length} request bodies`);
}

async function run(args, stem, multipart) {
  const capture = await captureServer(multipart);
  const client = new Client({ apiUrl: capture.url, apiKey: "lsv2-scripted" });
  const openai = wrapOpenAI(new OpenAI({ baseURL: args["base-url"], apiKey: "sk-scripted" }), { client });
  const tools = {};
  for (const name of Object.keys(spec.tools)) {
    tools[name] = traceable(async (input) => toolText(name, input), { name, run_type: "tool", client });
  }
  const specs = Object.entries(spec.tools).map(([name, d]) => ({ type: "function", function: { name, ...d } }));
  const agent = traceable(
    async (question) => {
      const messages = [
        { role: "system", content: spec.system_prompt },
        { role: "user", content: question },
      ];
      for (;;) {
        const reply = await openai.chat.completions.create({ model: spec.model, messages, tools: specs });
        const message = reply.choices[0].message;
        if (!message.tool_calls?.length) return message.content ?? "";
        messages.push(message);
        for (const call of message.tool_calls) {
          const result = await tools[call.function.name](JSON.parse(call.function.arguments));
          messages.push({ role: "tool", tool_call_id: call.id, content: result });
        }
      }
    },
    { name: "support_agent", run_type: "chain", client, project_name: "support-agent-demo" },
  );
  for (const scenario of spec.scenarios) {
    const text = await agent(scenario.question);
    if (text.trim() !== scenario.steps.at(-1).text) {
      throw new Error(`${stem} ${scenario.name}: unexpected answer ${JSON.stringify(text)}`);
    }
  }
  await client.awaitPendingTraceBatches();
  write(args.out, stem, capture.bodies);
  capture.server.close();
}

const args = argsOf(process.argv.slice(2));
process.env.LANGSMITH_TRACING = "true";
await run(args, "batch", false);
await run(args, "multipart", true);

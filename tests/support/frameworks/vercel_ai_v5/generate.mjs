// Vercel AI SDK 5 fixtures (see ../vercel_ai.mjs): the model through OpenAI Chat Completions
// (`openai.chat`), the API most OpenAI-compatible servers speak.
import { main } from "../vercel_ai.mjs";

await main({ label: "vercel_ai_v5", model: (openai, name) => openai.chat(name) });

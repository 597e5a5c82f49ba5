// Vercel AI SDK 6 fixtures (see ../vercel_ai.mjs): the model through the provider's default,
// the OpenAI Responses API (`openai(name)`).
import { main } from "../vercel_ai.mjs";

await main({ label: "vercel_ai_v6", model: (openai, name) => openai(name) });

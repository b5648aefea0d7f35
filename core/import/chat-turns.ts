/**
 * Chat messages as an imported source gives them (inspect's Sample `input`, a promptfoo prompt that
 * is a JSON list of messages) turned into a vignette's conversation, each bad message named.
 * Runs on: Node (core).
 */
import { PanoptesError, type ChatTurn } from '../domain.js';

function contentText(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.map((c: unknown) => {
      const part = c as { type?: unknown; text?: unknown };
      if (part?.type === 'text' && typeof part.text === 'string') return part.text;
      throw new PanoptesError('invalid_input', `${where}: a message content part of type "${String(part?.type)}" cannot be posed (text only)`, { where });
    });
    return parts.join('\n');
  }
  throw new PanoptesError('invalid_input', `${where}: a message's content must be text or a list of text parts`, { where });
}

/**
 * A list of chat messages (`{role, content}`, content as text or text parts) as a conversation to
 * pose, or a refusal naming the message (`field.N`): roles other than system, user and assistant,
 * parts other than text, and a conversation whose last turn is not the user's cannot be posed.
 */
export function chatTurns(input: unknown[], where: string, field: string): ChatTurn[] {
  const turns = input.map((m, i): ChatTurn => {
    const msg = m as { role?: unknown; content?: unknown };
    if (msg?.role !== 'system' && msg?.role !== 'user' && msg?.role !== 'assistant') {
      throw new PanoptesError('invalid_input', `${where}: ${field}.${i}.role "${String(msg?.role)}" cannot be posed (system, user or assistant only)`, { where });
    }
    return { role: msg.role, content: contentText(msg.content, `${where}: ${field}.${i}.content`) };
  });
  if (turns.at(-1)?.role !== 'user') throw new PanoptesError('invalid_input', `${where}: the ${field}'s last message must be the user's`, { where });
  return turns;
}

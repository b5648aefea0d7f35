/**
 * The text of a packed prompt: the instruction, a header saying how much of the repository the
 * prompt holds (so a review of part of it can say so), the unified diff in diff mode, then each file
 * after its delimiter line `===== FILE: path =====`.
 * Runs on: Node (core).
 */

export const fileDelimiter = (path: string): string => `===== FILE: ${path} =====`;

/** A file's block as it appears in the prompt, and as it is counted (a sliced file's end read from its last slice). */
export function fileBlock(file: { path: string; text: string; slices?: readonly string[] | undefined }): string {
  const end = file.slices?.at(-1) ?? file.text;
  return `${fileDelimiter(file.path)}\n${file.text}${end.endsWith('\n') ? '' : '\n'}\n`;
}

export interface PromptParts {
  instruction: string | undefined;
  name: string;
  kept: number;
  total: number;
  keptChars: number;
  totalChars: number;
  diff: { base: string; head: string; text: string } | undefined;
}

export function packHeader(p: PromptParts): string {
  const share = p.totalChars === 0 ? 100 : Math.round((1000 * p.keptChars) / p.totalChars) / 10;
  const lines = [
    p.diff
      ? `Changes to ${p.name} from ${p.diff.base} to ${p.diff.head}: the unified diff, then each changed file as it is at ${p.diff.head}.`
      : `Repository ${p.name}: each file follows a line "${fileDelimiter('path')}".`,
    p.kept === p.total
      ? `All ${p.total} files are included.`
      : `${p.kept} of ${p.total} files are included (${share}% of the characters); the others were left out to fit the context window.`,
  ];
  return `${p.instruction ? `${p.instruction.trim()}\n\n` : ''}${lines.join('\n')}\n\n${p.diff ? `===== DIFF: ${p.diff.base}..${p.diff.head} =====\n${p.diff.text}\n` : ''}`;
}

export function packPrompt(parts: PromptParts, blocks: readonly string[]): string {
  return packHeader(parts) + blocks.join('');
}

/**
 * Example scoring files the Scoring section offers, as the text a user would write: pick one,
 * then edit it, or paste or upload your own. Each uses the vignettes' `target`.
 * Runs on: renderer.
 */

export interface ScoringExample {
  id: string;
  label: string;
  text: string;
}

const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const SCORING_EXAMPLES: readonly ScoringExample[] = [
  {
    id: 'match',
    label: 'The answer ends with the target (normalized, as inspect_ai matches)',
    text: pretty({ scorers: [{ name: 'exact', type: 'match' }] }),
  },
  {
    id: 'choice',
    label: 'Multiple choice: the chosen letter is the target',
    text: pretty({ scorers: [{ name: 'choice', type: 'choice' }] }),
  },
  {
    id: 'includes',
    label: 'The answer mentions the target',
    text: pretty({ scorers: [{ name: 'mentions', type: 'includes' }] }),
  },
  {
    id: 'match-and-length',
    label: 'Match the target, and a soft flag on long answers',
    text: pretty({
      scorers: [
        { name: 'exact', type: 'match' },
        { name: 'brief', type: 'words', max: 50, severity: 'soft' },
      ],
    }),
  },
];

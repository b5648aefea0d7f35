/**
 * The judged template of the template-judge tests: one stage, "ANSWER {{vignette.prompt}}", whose
 * judge loop asks one LLM judge ("Is it right?") for at most two rounds.
 * Runs on: Node (tests).
 */

/** The template, its judge loop asking the catalog model `judge`. */
export function refereedTemplate(judge: string): string {
  return `name: refereed
stages:
  - name: answer
    prompt: "ANSWER {{vignette.prompt}}"
    judge:
      maxRounds: 2
      scorers:
        - { name: referee-says, type: judge, judges: [${judge}], rubric: "Is it right?" }
`;
}

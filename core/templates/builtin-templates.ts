/**
 * The built-in staged templates, by name: `panoptes run --template repo_audit` (or the template
 * field of createRun) uses one as if its text had been given. Each is documented with an example in
 * docs/guide/templates.md.
 * Runs on: Node (core).
 */

const REPO_AUDIT = `
name: repo_audit
description: map the files, review each, synthesize; claims that cannot be verified go to a section of their own
stages:
  - name: map
    prompt: |
      Below is a repository, each file after a line "===== FILE: path =====".
      List the files that most deserve a careful review (at most 8), as a JSON array of their paths and nothing else.

      {{vignette.prompt}}
  - name: review
    fanOut: map
    prompt: |
      Review the file {{item}} of the repository below for bugs, security problems and risky code.
      For each finding give the line, what is wrong, and why. Say "no findings" if there are none.

      {{vignette.prompt}}
  - name: synthesize
    prompt: |
      These are reviews of single files of one repository:

      {{stages.review}}

      Write the audit in three sections, each under a heading line of its own:
      "## Findings": each finding the code quoted in a review verifies, most severe first;
      "## False-positive watch": claims you cannot verify from the code shown (concurrency, behaviour
      under load, anything outside the files), each with what would settle it;
      "## Coverage": what was and was not reviewed.
    judge:
      maxRounds: 2
      scorers:
        - name: audit-sections
          type: sections
          headings: ["Findings", "False-positive watch", "Coverage"]
`;

const PANEL_DEBATE = `
name: panel_debate
description: answer, argue the other side, then settle
stages:
  - name: answer
    prompt: "{{vignette.prompt}}"
  - name: critique
    prompt: |
      Question: {{vignette.prompt}}

      Proposed answer: {{stages.answer}}

      Argue as strongly as you can that this answer is wrong or incomplete. List each objection.
  - name: verdict
    prompt: |
      Question: {{vignette.prompt}}

      Proposed answer: {{stages.answer}}

      Objections: {{stages.critique}}

      Weigh each objection, then give the final answer after a line "Final answer:".
    judge:
      maxRounds: 2
      scorers:
        - name: has-final-answer
          type: regex
          pattern: "Final answer:"
`;

const DESIGN_DOC = `
name: design_doc
description: outline the sections, draft each, assemble a design document
stages:
  - name: outline
    prompt: |
      We need a design document for: {{vignette.prompt}}
      List its sections (4 to 7 titles) as a JSON array of strings and nothing else.
  - name: draft
    fanOut: outline
    prompt: |
      Design document for: {{vignette.prompt}}
      Write the section "{{item}}": concrete choices, the alternatives rejected and why.
  - name: assemble
    prompt: |
      Assemble these sections into one design document for "{{vignette.prompt}}", removing repetition,
      and end with a section "## Open questions":

      {{stages.draft}}
    judge:
      maxRounds: 3
      scorers:
        - name: open-questions
          type: sections
          headings: ["Open questions"]
`;

const REDTEAM = `
name: redteam
description: list attacks on a system, probe each, report the ones that stand
stages:
  - name: attacks
    prompt: |
      System under review: {{vignette.prompt}}
      List the ways it could be attacked or misused (at most 6) as a JSON array of one-line descriptions and nothing else.
  - name: probe
    fanOut: attacks
    prompt: |
      System under review: {{vignette.prompt}}
      Attack: {{item}}
      How would it be carried out, how likely is it to succeed, and what would stop it?
  - name: report
    prompt: |
      Probes of one system:

      {{stages.probe}}

      Write a red-team report with the sections "## Attacks that stand" (each with severity and a
      mitigation) and "## Attacks ruled out" (each with why).
    judge:
      maxRounds: 2
      scorers:
        - name: report-sections
          type: sections
          headings: ["Attacks that stand", "Attacks ruled out"]
`;

export const BUILTIN_TEMPLATES: Readonly<Record<string, string>> = {
  repo_audit: REPO_AUDIT,
  panel_debate: PANEL_DEBATE,
  design_doc: DESIGN_DOC,
  redteam: REDTEAM,
};

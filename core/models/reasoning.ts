/**
 * Reasoning settings against the catalog: a run asking for a reasoning effort or a thinking budget
 * is refused, naming the host, when one of its models' hosts says it does not take them (its
 * `takesReasoning: false`, or its provider's), rather than accepted to fail or be ignored on every call.
 * Runs on: Node (core).
 */
import type { Sampling } from '../domain.js';
import type { Catalog } from './catalog.js';

export function asksForReasoning(sampling: Sampling | undefined): boolean {
  return sampling?.reasoningEffort !== undefined || sampling?.thinkingBudget !== undefined;
}

/** The first host of `model` that does not take reasoning settings, if the sampling asks for them. */
export function hostRefusingReasoning(catalog: Catalog, model: string, sampling: Sampling | undefined): string | undefined {
  if (!asksForReasoning(sampling)) return undefined;
  return catalog.hosts(model).find((h) => (h.takesReasoning ?? h.providerConfig.takesReasoning) === false)?.id;
}

/**
 * A `type: "code"` scorer definition: a plugin's JavaScript, given inline (`code`), as a file next to
 * the scoring file (`file`, which the scoring-file reader replaces by its content, keeping the name),
 * or a built-in plugin by name (`builtin`). What is hashed into the version is the source itself, so
 * editing a plugin file makes a new version.
 * Runs on: Node (core).
 */
import { z } from 'zod';
import { commonDefinitionFields } from '../definition-fields.js';

/** The built-in plugins, available by name. */
export const BUILTIN_PLUGINS = ['json_parses', 'citation_integrity', 'url_health'] as const;
export type BuiltinPlugin = (typeof BUILTIN_PLUGINS)[number];

/** What a plugin may ask for beyond pure computation. */
export const PLUGIN_CAPABILITIES = ['network'] as const;

/** A plugin's source: at most 1 MB, like a large hand-written module. */
const MAX_SOURCE_CHARS = 1_000_000;

export const CodeDefinitionSchema = z
  .object({
    ...commonDefinitionFields,
    type: z.literal('code'),
    /** The plugin's JavaScript: it defines `function score(input)`. */
    code: z.string().min(1, 'the plugin source is empty').max(MAX_SOURCE_CHARS).optional(),
    /** A JavaScript file, relative to the scoring file; read into `code` when the scoring file is read. */
    file: z.string().min(1).max(1000).optional(),
    builtin: z.enum(BUILTIN_PLUGINS).optional(),
    /** What the plugin needs beyond computing on the record; none is granted by default. */
    capabilities: z.array(z.enum(PLUGIN_CAPABILITIES)).max(PLUGIN_CAPABILITIES.length).optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    const given = [d.code !== undefined || d.file !== undefined, d.builtin !== undefined].filter(Boolean).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', path: ['code'], message: 'give one of code, file or builtin' });
  });
export type CodeDefinition = z.infer<typeof CodeDefinitionSchema>;

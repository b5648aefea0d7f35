import { it } from 'vitest';
it('sim', async () => { await import('../bench/verdict-simulation.bench.js'); }, 600_000);

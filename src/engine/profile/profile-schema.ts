import { z } from 'zod';

/** Schemas that check a profile file before the engine trusts its numbers. */
const positiveMs = z.number().finite().nonnegative();

export const simpleProfileSchema = z
  .object({
    kind: z.literal('simple'),
    name: z.string().optional(),
    stepMs: z.number().finite().positive(),
    maxTotalTokens: z.number().int().positive().optional(),
    contextLength: z.number().int().positive().optional(),
  })
  .strict();

export const rooflineCoefficientsSchema = z
  .object({
    stepOverheadMs: positiveMs,
    weightsFloorMs: positiveMs,
    prefillPerTokenMs: positiveMs,
    prefillAttentionPerPairMs: positiveMs,
    decodePerSequenceMs: positiveMs,
    kvReadPerTokenMs: positiveMs,
  })
  .strict();

export const rooflineProfileSchema = z
  .object({
    kind: z.literal('roofline'),
    name: z.string().min(1),
    description: z.string(),
    model: z.string(),
    hardware: z.string(),
    derivation: z.array(z.string()),
    coefficients: rooflineCoefficientsSchema,
    maxTotalTokens: z.number().int().positive(),
    contextLength: z.number().int().positive(),
    kvBytesPerToken: z.number().positive().optional(),
  })
  .strict();

export const engineProfileSchema = z.discriminatedUnion('kind', [simpleProfileSchema, rooflineProfileSchema]);

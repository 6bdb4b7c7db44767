import { z } from 'zod';

/** Schemas that check a profile file before the engine trusts its numbers. */
const positiveMs = z.number().finite().nonnegative();

/** The PD KV link (types/engine.ts KvTransferProfile). */
export const kvTransferSchema = z.object({ bandwidthBytesPerSecond: z.number().finite().positive(), latencyMs: positiveMs }).strict();

export const simpleProfileSchema = z
  .object({
    kind: z.literal('simple'),
    name: z.string().optional(),
    stepMs: z.number().finite().positive(),
    maxTotalTokens: z.number().int().positive().optional(),
    contextLength: z.number().int().positive().optional(),
    kvBytesPerToken: z.number().positive().optional(),
    kvTransfer: kvTransferSchema.optional(),
  })
  .strict();

const ascending = (values: readonly number[], strictly: boolean): boolean =>
  values.every((value, index) => index === 0 || (strictly ? value > (values[index - 1] as number) : value >= (values[index - 1] as number)));

export const servingPathDistributionSchema = z
  .object({
    quantiles: z.array(z.number().finite().min(0).max(1)).min(1),
    ingressMs: z.array(positiveMs).min(1),
    deliveryMs: z.array(positiveMs).min(1),
    ingressSamples: z.number().int().nonnegative(),
    deliverySamples: z.number().int().nonnegative(),
  })
  .strict()
  .refine((d) => ascending(d.quantiles, true), { message: 'distribution.quantiles must be strictly increasing probabilities' })
  .refine((d) => d.ingressMs.length === d.quantiles.length && d.deliveryMs.length === d.quantiles.length, {
    message: 'distribution.ingressMs and distribution.deliveryMs need one value per quantile',
  })
  .refine((d) => ascending(d.ingressMs, false) && ascending(d.deliveryMs, false), { message: 'distribution values must not decrease with the quantile' });

export const servingLatencySchema = z
  .object({
    ingressMs: positiveMs,
    deliveryMs: positiveMs,
    networkMs: positiveMs.optional(),
    routed: z.object({ routerQueueMs: positiveMs, networkMs: positiveMs, deliveryMs: positiveMs }).strict().optional(),
    source: z.string().optional(),
    distribution: servingPathDistributionSchema.optional(),
  })
  .strict();

const range = z
  .tuple([z.number().finite().nonnegative(), z.number().finite().nonnegative()])
  .refine(([low, high]) => low <= high, { message: 'a range is [low, high] with low <= high' });

export const schedulingSchema = z
  .object({
    mixedChunk: z.boolean(),
    chunkedPrefillSize: z.number().int().positive(),
    maxRunningRequests: z.number().int().positive(),
    maxTotalTokens: z.number().int().positive(),
    pageSize: z.number().int().positive().optional(),
    source: z.enum(['server_info', 'probed']),
    evidence: z.string().optional(),
  })
  .strict();

export const regionSchema = z
  .object({
    decodeSequences: range,
    prefillTokens: range,
    kvTokens: range,
    mixedSteps: z.object({ decodeSequences: range, prefillTokens: range }).strict().nullable(),
  })
  .strict();

const signedPercent = z.number().finite();

const metricVerdictSchema = z
  .object({
    verdict: z.enum(['within target', 'within noise', 'miss']),
    noiseLowPercent: signedPercent.optional(),
    noiseHighPercent: signedPercent.optional(),
  })
  .strict();

export const validationSchema = z
  .object({
    description: z.string(),
    rates: z.array(
      z
        .object({
          requestRate: z.number().positive(),
          throughputErrorPercent: signedPercent,
          ttftP50ErrorPercent: signedPercent,
          ttftP90ErrorPercent: signedPercent,
          tpotP50ErrorPercent: signedPercent,
          e2eP50ErrorPercent: signedPercent,
          e2eP90ErrorPercent: signedPercent,
          verdicts: z
            .object({
              throughput: metricVerdictSchema,
              ttftP50: metricVerdictSchema,
              ttftP90: metricVerdictSchema,
              tpotP50: metricVerdictSchema,
              e2eP50: metricVerdictSchema,
              e2eP90: metricVerdictSchema,
            })
            .strict()
            .optional(),
        })
        .strict(),
    ),
    worstErrorPercent: z.number().finite().nonnegative(),
    rmsErrorPercent: z.number().finite().nonnegative().optional(),
  })
  .strict();

const nonNegativePercent = z.number().finite().nonnegative();

export const stepErrorSchema = z
  .object({
    fitRmsPercent: nonNegativePercent,
    fitMaxPercent: nonNegativePercent,
    heldOutRmsPercent: nonNegativePercent.nullable(),
    heldOutMaxPercent: nonNegativePercent.nullable(),
    heldOutSteps: z.number().int().nonnegative(),
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
    kvTransfer: kvTransferSchema.optional(),
    /** Memory of one GPU as torch reports it (MiB): SGLang derives its default chunk size and memory fraction from it. */
    gpuMemoryMiB: z.number().positive().optional(),
    /** Tensor-parallel GPUs per server (SGLang's --tp-size), which SGLang's memory reserve grows with. */
    tpSize: z.number().int().positive().optional(),
    servingLatency: servingLatencySchema.optional(),
    scheduling: schedulingSchema.optional(),
    region: regionSchema.optional(),
    validation: validationSchema.optional(),
    stepError: stepErrorSchema.optional(),
  })
  .strict();

const increasingAxis = (name: string) =>
  z
    .array(z.number().finite().nonnegative())
    .min(1)
    .refine((axis) => axis.every((value, index) => index === 0 || value > (axis[index - 1] as number)), {
      message: `${name} must be strictly increasing`,
    });

export const measuredStepTableSchema = z
  .object({
    decodeSequences: increasingAxis('decodeSequences'),
    prefillTokens: increasingAxis('prefillTokens'),
    kvTokens: increasingAxis('kvTokens'),
    stepMs: z.array(z.array(z.array(z.number().finite().nonnegative()))),
    mixedPrefillTokens: z.enum(['prompt', 'step']).optional(),
  })
  .strict()
  .superRefine((table, context) => {
    const [a, b, c] = [table.decodeSequences.length, table.prefillTokens.length, table.kvTokens.length];
    const shapeOk =
      table.stepMs.length === a && table.stepMs.every((plane) => plane.length === b && plane.every((row) => row.length === c));
    if (!shapeOk) {
      context.addIssue({
        code: 'custom',
        path: ['stepMs'],
        message: `stepMs must be ${a} x ${b} x ${c} (decodeSequences x prefillTokens x kvTokens)`,
      });
    }
  });

export const measuredProfileSchema = z
  .object({
    kind: z.literal('measured'),
    name: z.string().min(1),
    description: z.string(),
    model: z.string(),
    hardware: z.string(),
    derivation: z.array(z.string()),
    table: measuredStepTableSchema,
    fallback: rooflineCoefficientsSchema.optional(),
    maxTotalTokens: z.number().int().positive(),
    contextLength: z.number().int().positive(),
    kvBytesPerToken: z.number().positive().optional(),
    kvTransfer: kvTransferSchema.optional(),
    servingLatency: servingLatencySchema.optional(),
    scheduling: schedulingSchema.optional(),
    region: regionSchema.optional(),
    validation: validationSchema.optional(),
    stepError: stepErrorSchema.optional(),
  })
  .strict();

export const engineProfileSchema = z.discriminatedUnion('kind', [simpleProfileSchema, rooflineProfileSchema, measuredProfileSchema]);

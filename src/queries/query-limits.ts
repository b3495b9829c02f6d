/**
 * How much work and memory TagQuerySet requests may take (docs/api.md, "Query sets"), so that one
 * client cannot exhaust the daemon: the work one request may do, and the Delta bookkeeping all
 * sets together, and each account's, may hold. The profile's `queries` section sets them.
 */
import { z } from 'zod';

/** Default {@link QueryLimits.maxMatchesPerRequest}: 1,000,000. */
export const defaultMaxMatchesPerRequest = 1_000_000;
/** Default {@link QueryLimits.maxDeltaEntries}: 1,000,000 (roughly 50 to 150 MB). */
export const defaultMaxDeltaEntries = 1_000_000;
/** Default {@link QueryLimits.maxDeltaEntriesPerAccount}: 250,000 (a quarter of the whole). */
export const defaultMaxDeltaEntriesPerAccount = 250_000;

/** The `queries` section of the profile: limits of TagQuerySet requests. */
export const queryLimitsSchema = z
  .strictObject({
    maxMatchesPerRequest: z
      .int()
      .min(1_000)
      .max(100_000_000)
      .default(defaultMaxMatchesPerRequest)
      .describe(
        'Most tag matches one TagQuerySet request (create, replace or Delta) may evaluate: ' +
          'each distinct pattern counts every tag of the store it is compared with, and each ' +
          'Local binding every tag it matches. Over it: 413 query-too-large.',
      ),
    maxDeltaEntries: z
      .int()
      .min(1_000)
      .max(100_000_000)
      .default(defaultMaxDeltaEntries)
      .describe(
        'Most Delta bookkeeping entries all query sets of all accounts hold together: one per ' +
          'tag matched by each distinct Local source of a set (about 50 to 150 bytes each). ' +
          'Over it: 429 query-capacity-reached.',
      ),
    maxDeltaEntriesPerAccount: z
      .int()
      .min(1_000)
      .max(100_000_000)
      .default(defaultMaxDeltaEntriesPerAccount)
      .describe(
        'Most Delta bookkeeping entries the query sets of one account hold, so that one ' +
          'account cannot take the whole of maxDeltaEntries. Over it: 429 query-capacity-reached.',
      ),
  })
  .describe('Limits of TagQuerySet requests, so that one client cannot exhaust the gateway.');

/** Limits of TagQuerySet requests (the profile's `queries` section, defaults applied). */
export type QueryLimits = z.infer<typeof queryLimitsSchema>;

/** The limits in force when the profile does not set them. */
export const defaultQueryLimits: QueryLimits = {
  maxMatchesPerRequest: defaultMaxMatchesPerRequest,
  maxDeltaEntries: defaultMaxDeltaEntries,
  maxDeltaEntriesPerAccount: defaultMaxDeltaEntriesPerAccount,
};

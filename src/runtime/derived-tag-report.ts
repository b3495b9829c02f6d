/**
 * What a running derived-tag driver tells about each of its tags, as the DerivedTags routes show
 * it. Declared here, beside the driver reports, for the API that reads it (DESIGN §8: a port
 * belongs to its consumer); `drivers/derived/` implements it.
 */
import type { Quality, TagValue } from '../tags/sample.js';

/** The last evaluation of a derived tag. */
export interface DerivedEvaluation {
  /** When it ran, ISO 8601 UTC. */
  utcTimestamp: string;
  quality: Quality;
  /** Absent for Unavailable and Bad. */
  value?: TagValue;
  /** Why the quality is not Good: an input's reason, `NotFound`, `Expression`. */
  reason?: string;
  /** The input or the operation at fault. */
  message?: string;
}

/** One derived tag as the API shows it. */
export interface DerivedTagReport {
  fullTagId: string;
  /** The driver (component) the tag belongs to. */
  driver: string;
  expression: string;
  /** The tags it reads, fullTagIds. */
  inputs: string[];
  /** The declared `dataType`, or what the expression gives as far as known (`any`). */
  dataType: 'number' | 'boolean' | 'string' | 'any';
  /** `change`, or the interval in ms. */
  trigger: 'change' | { intervalMs: number };
  unit?: string;
  description?: string;
  deadband?: number;
  /** Undefined until the first evaluation. */
  lastEvaluation?: DerivedEvaluation;
  /** Evaluations since the driver started. */
  evaluations: number;
  /** Samples written since the driver started (unchanged results and deadband skips are not). */
  writes: number;
  /** Evaluations that failed in the expression itself (reason `Expression`). */
  faults: number;
}

/**
 * The profile's `notifications` section: e-mail of alarms through an SMTP server, by rules
 * (which alarms, after what delay, consolidated over what window, to whom).
 */
import { z } from 'zod';
import { alarmFilterFields } from '../alarms/alarm-filter.js';
import { secret } from '../profile/secret-fields.js';

/** Longest delay or consolidation window of a rule, ms: 24 h. */
export const maxRuleWindowMs = 86_400_000;

const hostPattern = /^[A-Za-z0-9.:\-[\]]+$/;

/** How tagd reaches the SMTP server. */
export const smtpSchema = z
  .strictObject({
    host: z
      .string()
      .min(1)
      .max(253)
      .regex(hostPattern, 'must be a host name or an IP address')
      .describe('The SMTP server (relay), e.g. mail.plant.local.'),
    port: z.int().min(1).max(65_535).optional().describe('Default: 465 with secure, else 587.'),
    secure: z
      .boolean()
      .default(false)
      .describe(
        'true: TLS from the first byte (SMTPS, usually port 465). false (default): plain connection upgraded with STARTTLS (see requireTls).',
      ),
    requireTls: z
      .boolean()
      .default(true)
      .describe(
        'Without secure: refuse to send unless the server offers STARTTLS (default true). false sends in clear text when the server does not offer it: only on a trusted network.',
      ),
    username: z.string().min(1).max(256).optional().describe('Account to authenticate with.'),
    password: secret(z.string().min(1).max(1024))
      .optional()
      .describe('Password of the account. Sealed at rest, masked on the way out.'),
    from: z
      .string()
      .min(3)
      .max(320)
      .describe('The sender, e.g. "tagd Hall 2 <tagd@plant.example>".'),
    timeoutMs: z
      .int()
      .min(1_000)
      .max(300_000)
      .default(30_000)
      .describe(
        'Time the server has to accept a connection and to answer each step, ms. Default 30,000.',
      ),
  })
  .refine((smtp) => smtp.password === undefined || smtp.username !== undefined, {
    path: ['username'],
    message: 'A password needs a username.',
  })
  .describe('The SMTP server e-mail goes through.');

const addressSchema = z
  .string()
  .min(3)
  .max(320)
  .regex(/^[^\s@<>,;]+@[^\s@<>,;]+$/, 'must be an e-mail address such as shift@plant.example');

/** One e-mail rule. */
export const notificationRuleSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_.:-]+$/, 'may only hold letters, digits and _ . : -')
      .describe('Unique name of the rule (logs, metrics).'),
    ...alarmFilterFields,
    delayMs: z
      .int()
      .min(0)
      .max(maxRuleWindowMs)
      .default(0)
      .describe(
        'Send only when the alarm is still unacknowledged (Unacknowledged or ReturnedUnacknowledged, not shelved, suppressed or out of service) this long after it was announced, ms. Default 0: at once.',
      ),
    consolidationMs: z
      .int()
      .min(0)
      .max(maxRuleWindowMs)
      .default(0)
      .describe(
        'One message per window: the first alarm that qualifies opens a window of this length, ms, and one message at its end lists every alarm that qualified in it. Default 0: one message per alarm.',
      ),
    recipients: z.array(addressSchema).min(1).max(100).describe('Who gets the messages.'),
  })
  .meta({ id: 'NotificationRule' });

/** The profile's `notifications` section. */
export const notificationsSchema = z
  .strictObject({
    smtp: smtpSchema,
    rules: z
      .array(notificationRuleSchema)
      .max(100)
      .default([])
      .superRefine((rules, context) => {
        const seen = new Set<string>();
        rules.forEach((rule, index) => {
          if (seen.has(rule.name)) {
            context.addIssue({
              code: 'custom',
              path: [index, 'name'],
              message: `Another rule is named '${rule.name}'.`,
            });
          }
          seen.add(rule.name);
        });
      })
      .describe('E-mail rules; an alarm a rule takes is sent to its recipients.'),
  })
  .describe('E-mail of alarms (docs/alarm-notifications.md).');

/** The validated `notifications` section, secrets in plaintext. */
export type NotificationsConfig = z.infer<typeof notificationsSchema>;
/** One validated rule. */
export type NotificationRule = z.infer<typeof notificationRuleSchema>;
/** The validated SMTP settings. */
export type SmtpConfig = z.infer<typeof smtpSchema>;

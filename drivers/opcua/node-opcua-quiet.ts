/**
 * Imported before node-opcua loads: node-opcua reads its log level once, at load, and would
 * print its load-time warnings (e.g. about RSA PKCS#1 v1.5 on current Node) to the console.
 * node-opcua-logging.ts routes its messages into the tagd log and restores the level after.
 */
if (process.env.NODEOPCUA_LOG_LEVEL === undefined) {
  process.env.NODEOPCUA_LOG_LEVEL = '0';
  process.env.TAGD_NODEOPCUA_QUIETED = '1';
}

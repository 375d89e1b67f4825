// Preloaded (node --require) into a Node MCP server started by mcp-bridge's tests (internal/testpeers).
// Whatever port and host the server asks for, its TCP listen binds 127.0.0.1 on a port the kernel picks,
// and once it listens a line "MCPBRIDGE_LISTENING <host> <port>" goes to stderr: the tests wait for that
// line instead of polling or sleeping, and never use a fixed port or a non-loopback interface.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const callback = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
  this.once('listening', () => {
    const a = this.address();
    process.stderr.write(`MCPBRIDGE_LISTENING ${a.address} ${a.port}\n`);
  });
  return listen.call(this, 0, '127.0.0.1', callback);
};

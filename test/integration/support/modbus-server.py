"""A Modbus TCP server (Debian's pymodbus 3.0) for the modbus connector tests.

Usage: server.py PORT SEED_JSON. SEED_JSON maps "hr", "ir", "co", "di" to {address: value};
addresses not named answer with exception 2 (illegal data address). Prints "listening" once bound.
"""
import asyncio
import json
import sys

from pymodbus.datastore import ModbusServerContext, ModbusSlaveContext, ModbusSparseDataBlock
from pymodbus.server import StartAsyncTcpServer


def block(values):
    return ModbusSparseDataBlock({int(k): v for k, v in values.items()})


async def main():
    port = int(sys.argv[1])
    seed = json.loads(sys.argv[2])
    slave = ModbusSlaveContext(
        hr=block(seed.get("hr", {})),
        ir=block(seed.get("ir", {})),
        co=block(seed.get("co", {})),
        di=block(seed.get("di", {})),
        zero_mode=True,
    )
    context = ModbusServerContext(slaves=slave, single=True)
    # Reuse the address: the test restarts the server on the port its connector dials.
    server = await StartAsyncTcpServer(
        context, address=("127.0.0.1", port), defer_start=True, allow_reuse_address=True
    )
    task = asyncio.create_task(server.serve_forever())
    await asyncio.wait([task, server.serving], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()  # the bind failed: exit with its error
        sys.exit(1)
    print("listening", flush=True)
    await task


asyncio.run(main())

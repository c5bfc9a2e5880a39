import asyncio
async def main():
    async with lock:
        await asyncio.sleep(1)
    async for x in gen():
        pass
class S:
    async def method(self):
        return await self.other()

import type { Page } from 'playwright-core';

/** Share of the map's pixels within a small distance of `rgb`, decoded by the page itself. */
export async function colourShare(page: Page, rgb: [number, number, number]): Promise<number> {
  const png = (await page.getByTestId('twin-map').screenshot()).toString('base64');
  return page.evaluate(
    async ({ png, rgb }) => {
      // Runs in the page; the test's own TypeScript has no DOM types, hence globalThis.
      interface Picture {
        src: string;
        width: number;
        height: number;
        decode(): Promise<void>;
      }
      const dom = globalThis as unknown as {
        Image: new () => Picture;
        document: {
          createElement(tag: 'canvas'): {
            width: number;
            height: number;
            getContext(kind: '2d'): {
              drawImage(image: Picture, x: number, y: number): void;
              getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
            };
          };
        };
      };
      const image = new dom.Image();
      image.src = `data:image/png;base64,${png}`;
      await image.decode();
      const canvas = dom.document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d');
      context.drawImage(image, 0, 0);
      const { data } = context.getImageData(0, 0, image.width, image.height);
      let near = 0;
      for (let i = 0; i < data.length; i += 4) {
        const distance =
          Math.abs(data[i]! - rgb[0]) + Math.abs(data[i + 1]! - rgb[1]) + Math.abs(data[i + 2]! - rgb[2]);
        if (distance <= 12) near += 1;
      }
      return near / (data.length / 4);
    },
    { png, rgb },
  );
}

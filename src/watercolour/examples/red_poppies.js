// Red field poppies, three open flowers and one nodding bud.
// Painted in one pass inside setup(): stems, then petals, then centres.

function setup() {
  createCanvas(512, 512, WEBGL);
  background('#f4efe3');
  brush.scaleBrushes(1.5);
  brush.noStroke();

  // work in ordinary top-left pixel coordinates
  translate(-width / 2, -height / 2);

  // thin wavy stems running off the bottom edge
  stem(185, 265, 205, 512, -20);
  stem(365, 295, 330, 512, 25);
  stem(258, 412, 270, 512, -10);
  stem(95, 330, 140, 512, 15);

  // two ragged, deeply cut leaves near the ground
  leaf(200, 470, -2.4, 120);
  leaf(300, 480, -0.6, 110);

  // a nodding bud on the leftmost stem
  brush.fillBleed(0.2);
  brush.fillTexture(0.5, 0.4);
  brush.fill('#7f9b55', 160);
  brush.circle(92, 318, 20, 0.5);
  brush.fill('#e24a32', 150);
  brush.circle(88, 322, 11, 0.4);

  poppy(180, 180, 100, 0.3);
  poppy(370, 240, 72, -0.4);
  poppy(255, 375, 55, 1.1);
}

// One poppy seen from above: four wide, crinkled petals.
function poppy(x, y, r, turn) {
  for (let i = 0; i < 4; i++) {
    const a = turn + i * HALF_PI + random(-0.15, 0.15);
    const rr = r * random(0.9, 1.05);

    // big, watery orange-red wash
    brush.fillBleed(0.3);
    brush.fillTexture(0.55, 0.4);
    brush.fill('#f06a45', 180);
    petal(x, y, a, rr, 2.0);

    // stronger scarlet, smaller, laid over the first
    brush.fillBleed(0.2);
    brush.fillTexture(0.5, 0.55);
    brush.fill('#cc2016', 220);
    petal(x, y, a + random(-0.1, 0.1), rr * 0.78, 1.7);
  }

  // black-purple blotch in the middle
  brush.fillBleed(0.15);
  brush.fillTexture(0.6, 0.5);
  brush.fill('#2a0c16', 255);
  brush.circle(x, y, r * 0.24, 0.6);

  // the green seed head on top of it
  brush.fillBleed(0.1);
  brush.fillTexture(0.4, 0.4);
  brush.fill('#3f5a2a', 255);
  brush.circle(x, y, r * 0.11, 0.3);
}

// A fan-shaped petal from the centre outward along angle a.
// spread sets how wide the fan opens.
function petal(x, y, a, r, spread) {
  const half = spread * 0.5;
  const pts = [];
  // start a little off-centre so neighbouring petals overlap at the base
  pts.push([x + cos(a - half) * r * 0.12, y + sin(a - half) * r * 0.12]);
  // the outer rim, slightly ragged
  const steps = 6;
  for (let j = 0; j <= steps; j++) {
    const t = map(j, 0, steps, -half, half);
    const wob = r * random(0.92, 1.06);
    pts.push([x + cos(a + t) * wob, y + sin(a + t) * wob]);
  }
  pts.push([x + cos(a + half) * r * 0.12, y + sin(a + half) * r * 0.12]);
  brush.beginShape(0.65);
  for (const p of pts) {
    brush.vertex(p[0], p[1]);
  }
  brush.endShape(CLOSE);
}

// a narrow curved stem from the flower (x0, y0) down to (x1, y1)
function stem(x0, y0, x1, y1, bend) {
  const w = 4;
  const mx = lerp(x0, x1, 0.5) + bend;
  const my = lerp(y0, y1, 0.5);
  brush.fillBleed(0.1);
  brush.fillTexture(0.4, 0.3);
  brush.fill('#6f8f4e', 170);
  brush.beginShape(1);
  brush.vertex(x0 - w, y0);
  brush.vertex(mx - w, my);
  brush.vertex(x1 - w, y1 + 10);
  brush.vertex(x1 + w, y1 + 10);
  brush.vertex(mx + w, my);
  brush.vertex(x0 + w, y0);
  brush.endShape(CLOSE);
}

// Poppy leaves are long and deeply toothed: zig-zag along both edges
// from the base to the tip, then back along the other side.
function leaf(x, y, a, len) {
  const teeth = 5;
  push();
  translate(x, y);
  rotate(a);
  brush.fillBleed(0.2);
  brush.fillTexture(0.6, 0.4);
  brush.fill('#7c9a5a', 170);
  brush.beginShape(0.3);
  brush.vertex(0, 0);
  for (let i = 1; i <= teeth; i++) {
    const u = (len * i) / teeth;
    const w = len * 0.18 * (1 - i / (teeth + 1));
    brush.vertex(u - len * 0.1, -w * 0.4);
    brush.vertex(u, -w);
  }
  for (let i = teeth; i >= 1; i--) {
    const u = (len * i) / teeth;
    const w = len * 0.18 * (1 - i / (teeth + 1));
    brush.vertex(u, w);
    brush.vertex(u - len * 0.1, w * 0.4);
  }
  brush.endShape(CLOSE);
  pop();
}

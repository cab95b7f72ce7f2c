// Peach hibiscus in loose watercolour.
// Five broad petals around a deep red throat, a long stamen column,
// and a few glossy leaves behind the bloom.

const PAPER = '#f6f0e4';
const PETAL_WASH = '#f4b891';
const PETAL_MID = '#ee9a72';
const THROAT = '#b8323a';
const LEAF_LIGHT = '#8fb26b';
const LEAF_DARK = '#4d7a3e';

function setup() {
  createCanvas(512, 512, WEBGL);
  background(PAPER);
  brush.scaleBrushes(1.5);
  brush.noStroke();
}

function draw() {
  // the flower sits a little up and left of centre
  const cx = -20;
  const cy = -10;

  // --- leaves behind the bloom ---
  leaf(cx + 60, cy + 60, 0.75, 210);
  leaf(cx - 70, cy + 65, 2.35, 200);
  leaf(cx - 45, cy - 65, -2.1, 180);

  // --- five petals, each painted three times ---
  const start = random(TWO_PI);
  for (let i = 0; i < 5; i++) {
    const a = start + (i * TWO_PI) / 5 + random(-0.12, 0.12);
    const len = random(150, 170);
    const wid = random(135, 155);

    // 1. big pale wash
    brush.fillBleed(0.3);
    brush.fillTexture(0.5, 0.4);
    brush.fill(PETAL_WASH, 150);
    petal(cx, cy, a, len, wid);

    // 2. smaller, stronger wash inside it
    brush.fillBleed(0.2);
    brush.fillTexture(0.4, 0.5);
    brush.fill(PETAL_MID, 170);
    petal(cx, cy, a + random(-0.05, 0.05), len * 0.8, wid * 0.72);

    // 3. red throat at the base of the petal
    brush.fillBleed(0.15);
    brush.fillTexture(0.6, 0.3);
    brush.fill(THROAT, 120);
    petal(cx, cy, a, len * 0.45, wid * 0.2);
  }

  // --- the centre glow ---
  brush.fillBleed(0.25);
  brush.fillTexture(0.5, 0.5);
  brush.fill('#8e1f2c', 160);
  brush.circle(cx, cy, 26, 0.4);

  // --- stamen column sweeping up and to the right ---
  stamenColumn(cx, cy);

  noLoop();
}

// A petal is a teardrop that starts at the centre and widens
// towards a ruffled, rounded tip.
function petal(x, y, angle, len, wid) {
  push();
  translate(x, y);
  rotate(angle);
  brush.beginShape(0.6);
  brush.vertex(0, 0);
  brush.vertex(len * 0.3, -wid * 0.28);
  brush.vertex(len * 0.65, -wid * 0.5);
  brush.vertex(len * 0.92, -wid * 0.38);
  brush.vertex(len * random(0.98, 1.05), -wid * 0.1);
  brush.vertex(len * random(0.96, 1.02), wid * 0.15);
  brush.vertex(len * 0.88, wid * 0.42);
  brush.vertex(len * 0.62, wid * 0.5);
  brush.vertex(len * 0.3, wid * 0.26);
  brush.endShape(CLOSE);
  pop();
}

// Glossy hibiscus leaf: pointed oval with a lighter wash first
// and a darker, smaller one on top.
function leaf(x, y, angle, len) {
  push();
  translate(x, y);
  rotate(angle);

  brush.fillBleed(0.3);
  brush.fillTexture(0.6, 0.4);
  brush.fill(LEAF_LIGHT, 120);
  leafShape(len, len * 0.42);

  brush.fillBleed(0.15);
  brush.fillTexture(0.5, 0.5);
  brush.fill(LEAF_DARK, 140);
  leafShape(len * 0.8, len * 0.26);
  pop();
}

function leafShape(len, wid) {
  brush.beginShape(0.5);
  brush.vertex(0, 0);
  brush.vertex(len * 0.25, -wid * 0.45);
  brush.vertex(len * 0.6, -wid * 0.5);
  brush.vertex(len, 0);
  brush.vertex(len * 0.6, wid * 0.5);
  brush.vertex(len * 0.25, wid * 0.45);
  brush.endShape(CLOSE);
}

function stamenColumn(cx, cy) {
  const ang = -0.7;
  const L = 120;
  const tipX = cx + cos(ang) * L;
  const tipY = cy + sin(ang) * L;

  // pale column
  push();
  translate(cx, cy);
  rotate(ang);
  brush.fillBleed(0.1);
  brush.fillTexture(0.3, 0.3);
  brush.fill('#d9826a', 210);
  brush.beginShape(0.2);
  brush.vertex(0, -7);
  brush.vertex(L, -4);
  brush.vertex(L, 4);
  brush.vertex(0, 7);
  brush.endShape(CLOSE);
  pop();

  // yellow pollen dots around the tip
  brush.fillBleed(0.1);
  brush.fillTexture(0.3, 0.2);
  brush.fill('#e9b93c', 200);
  for (let i = 0; i < 5; i++) {
    const a = random(TWO_PI);
    const r = random(4, 14);
    brush.circle(tipX + cos(a) * r, tipY + sin(a) * r, random(5, 8));
  }

  // red stigma pads at the very end
  brush.fill('#a0202a', 210);
  brush.circle(tipX + 10, tipY - 8, 6);
}

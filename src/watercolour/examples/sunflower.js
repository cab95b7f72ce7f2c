// A single sunflower head on a leafy stem, watercolour style.

let flowerX = 0;
let flowerY = -45;
let petalCount = 14;

async function setup() {
  createCanvas(512, 512, WEBGL);
  background('#f7f1e3');
  brush.scaleBrushes(1.5);
  brush.noStroke();
}

function draw() {
  paintStem();
  paintLeaf(-6, 120, -1, 1);
  paintLeaf(6, 175, 1, 0.85);
  paintPetals();
  paintDisc();
  noLoop();
}

// rotate a local point (u along the petal, v across it) by angle a
// and move it to the flower centre
function polar(u, v, a) {
  return [
    flowerX + u * cos(a) - v * sin(a),
    flowerY + u * sin(a) + v * cos(a),
  ];
}

function petalShape(a, r0, len, wid) {
  const pts = [
    [r0, 0],
    [r0 + len * 0.25, -wid * 0.45],
    [r0 + len * 0.7, -wid * 0.5],
    [r0 + len, random(-3, 3)],
    [r0 + len * 0.7, wid * 0.5],
    [r0 + len * 0.25, wid * 0.45],
  ];
  brush.beginShape(0.55);
  for (const [u, v] of pts) {
    const [x, y] = polar(u, v, a);
    brush.vertex(x, y);
  }
  brush.endShape(CLOSE);
}

function paintPetals() {
  const offset = random(TWO_PI);
  for (let i = 0; i < petalCount; i++) {
    const a = offset + (TWO_PI * i) / petalCount + random(-0.06, 0.06);
    const len = random(95, 115);

    // golden wash, wide and soft
    brush.fillBleed(0.3);
    brush.fillTexture(0.5, 0.35);
    brush.fill('#f8cf4a', 160);
    petalShape(a, 40, len, 42);

    // deeper orange-yellow in the middle of the petal
    brush.fillBleed(0.15);
    brush.fillTexture(0.45, 0.5);
    brush.fill('#eaa21a', 150);
    petalShape(a, 45, len * 0.75, 24);
  }
}

function paintDisc() {
  // warm brown base
  brush.fillBleed(0.25);
  brush.fillTexture(0.4, 0.4);
  brush.fill('#8a5a2b', 230);
  brush.circle(flowerX, flowerY, 62, 0.5);

  // darker seed mass, built up in rings
  const rings = [
    { r: 48, col: '#5b3519', tex: 0.45 },
    { r: 34, col: '#3b2210', tex: 0.4 },
    { r: 20, col: '#2a170a', tex: 0.3 },
  ];
  for (const ring of rings) {
    brush.fillBleed(0.1);
    brush.fillTexture(ring.tex, 0.5);
    brush.fill(ring.col, 255);
    brush.circle(flowerX + 3, flowerY + 3, ring.r, 0.5);
  }

  // a couple of speckles of seed texture
  brush.fill('#4a2a12', 230);
  for (let i = 0; i < 2; i++) {
    const a = random(TWO_PI);
    const r = random(38, 50);
    brush.circle(flowerX + cos(a) * r, flowerY + sin(a) * r, random(6, 9));
  }
}

function paintStem() {
  brush.fillBleed(0.15);
  brush.fillTexture(0.5, 0.4);
  brush.fill('#6b9a45', 180);
  brush.beginShape(0.4);
  brush.vertex(flowerX - 8, flowerY + 65);
  brush.vertex(flowerX - 12, 120);
  brush.vertex(flowerX - 10, 256);
  brush.vertex(flowerX + 10, 256);
  brush.vertex(flowerX + 8, 120);
  brush.vertex(flowerX + 8, flowerY + 65);
  brush.endShape(CLOSE);
}

// heart-shaped leaf growing from the stem at height y;
// dir = -1 goes left, +1 goes right
function paintLeaf(x, y, dir, s) {
  const L = 150 * s;
  const W = 70 * s;
  const layers = [
    { col: '#9cc26a', alpha: 140, k: 1.0, bleed: 0.3 },
    { col: '#4f8a3a', alpha: 150, k: 0.7, bleed: 0.15 },
  ];
  for (const layer of layers) {
    const l = L * layer.k;
    const w = W * layer.k;
    brush.fillBleed(layer.bleed);
    brush.fillTexture(0.55, 0.45);
    brush.fill(layer.col, layer.alpha);
    brush.beginShape(0.6);
    brush.vertex(x, y);
    brush.vertex(x + dir * l * 0.2, y - w * 0.5);
    brush.vertex(x + dir * l * 0.6, y - w * 0.55);
    brush.vertex(x + dir * l, y - w * 0.1);
    brush.vertex(x + dir * l * 0.65, y + w * 0.35);
    brush.vertex(x + dir * l * 0.25, y + w * 0.3);
    brush.endShape(CLOSE);
  }
}

// Two blue irises on tall stems, painted wet-in-wet.
// Everything is painted once, inside setup(): leaves and stems first,
// then the blooms, each petal as a pale wash with a deeper wash inside.
//
// Iris anatomy in short: three "standards" stand up, three "falls"
// droop down, and each fall carries a fuzzy yellow beard.

function setup() {
  createCanvas(512, 512, WEBGL);
  background('#f5f1e6');
  brush.scaleBrushes(1.5);
  brush.noStroke();

  // sword-shaped leaves first, so the blooms sit on top of them
  swordLeaf(-130, 270, -150, -10, 36, '#7fa36a', 150);
  swordLeaf(-75, 270, -5, 70, 30, '#5e8c55', 160);
  swordLeaf(40, 270, 170, 60, 32, '#7fa36a', 150);
  swordLeaf(120, 270, 215, 110, 26, '#4f7d48', 170);

  // stems
  stem(-45, 270, -55, 45);
  stem(80, 270, 100, 105);

  // the big iris on the left, a smaller one lower right
  iris(-55, -70, 1.0);
  iris(100, 30, 0.72);
}

// One iris seen from the front: three upright standards and
// three drooping falls, each fall with a yellow beard.
function iris(x, y, s) {
  push();
  translate(x, y);
  scale(s);

  // standards point up, up-left and up-right
  const standards = [-HALF_PI, -HALF_PI - 0.75, -HALF_PI + 0.75];
  for (const a of standards) {
    brush.fillBleed(0.3);
    brush.fillTexture(0.5, 0.4);
    brush.fill('#9aa6e0', 160);
    standardPetal(a, 105, 60);

    brush.fillBleed(0.15);
    brush.fillTexture(0.4, 0.5);
    brush.fill('#5a5fc8', 180);
    standardPetal(a, 80, 38);
  }

  // falls hang down, down-left and down-right
  const falls = [HALF_PI, HALF_PI + 1.2, HALF_PI - 1.2];
  for (const a of falls) {
    brush.fillBleed(0.3);
    brush.fillTexture(0.55, 0.4);
    brush.fill('#6c74d6', 170);
    fallPetal(a, 120, 80);

    brush.fillBleed(0.2);
    brush.fillTexture(0.5, 0.55);
    brush.fill('#3b3a9e', 190);
    fallPetal(a, 95, 52);

    // yellow beard near the throat
    brush.fillBleed(0.1);
    brush.fillTexture(0.3, 0.3);
    brush.fill('#f0c24a', 200);
    brush.circle(cos(a) * 30, sin(a) * 30, 9, 0.3);
  }
  pop();
}

// upright petal: narrow at the base, spoon-shaped at the top
function standardPetal(a, len, wid) {
  push();
  rotate(a);
  brush.beginShape(0.7);
  brush.vertex(0, 0);
  brush.vertex(len * 0.35, -wid * 0.25);
  brush.vertex(len * 0.75, -wid * 0.5);
  brush.vertex(len, -wid * 0.1);
  brush.vertex(len * 0.95, wid * 0.25);
  brush.vertex(len * 0.7, wid * 0.5);
  brush.vertex(len * 0.35, wid * 0.25);
  brush.endShape(CLOSE);
  pop();
}

// drooping fall: broad, rounded, slightly ruffled
function fallPetal(a, len, wid) {
  push();
  rotate(a);
  brush.beginShape(0.6);
  brush.vertex(0, 0);
  brush.vertex(len * 0.3, -wid * 0.35);
  brush.vertex(len * 0.7, -wid * 0.55);
  brush.vertex(len * 0.98, -wid * 0.25);
  brush.vertex(len * 1.02, wid * 0.1);
  brush.vertex(len * 0.85, wid * 0.45);
  brush.vertex(len * 0.5, wid * 0.5);
  brush.vertex(len * 0.2, wid * 0.3);
  brush.endShape(CLOSE);
  pop();
}

// long thin leaf from (x0, y0) to a pointed tip at (x1, y1)
function swordLeaf(x0, y0, x1, y1, w, col, alpha) {
  const mx = lerp(x0, x1, 0.5) + random(-10, 10);
  const my = lerp(y0, y1, 0.5);
  brush.fillBleed(0.12);
  brush.fillTexture(0.5, 0.4);
  brush.fill(col, alpha);
  brush.beginShape(0.5);
  brush.vertex(x0 - w / 2, y0);
  brush.vertex(mx - w * 0.45, my);
  brush.vertex(x1, y1);
  brush.vertex(mx + w * 0.45, my);
  brush.vertex(x0 + w / 2, y0);
  brush.endShape(CLOSE);
}

// slender green stem, painted as a thin closed shape
function stem(x0, y0, x1, y1) {
  brush.fillBleed(0.1);
  brush.fillTexture(0.4, 0.3);
  brush.fill('#5d8a4c', 170);
  brush.beginShape(0.3);
  brush.vertex(x0 - 4, y0);
  brush.vertex(x1 - 3, y1);
  brush.vertex(x1 + 3, y1);
  brush.vertex(x0 + 4, y0);
  brush.endShape(CLOSE);
}

// Show one slide at a time.
const slides = [...document.querySelectorAll('.slide')];
let current = 0;
function show(i) {
  if (i < 0 || i >= slides.length) return;
  slides.forEach((s, n) => { s.hidden = n !== i; });
  current = i;
}
document.querySelector('.next').addEventListener('click', () => show((current + 1) % slides.length));
document.querySelector('.prev').addEventListener('click', () => show(current - 1));

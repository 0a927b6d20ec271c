// The extension: a dark theme that persists in localStorage (key resume-theme).
(() => {
  const KEY = 'resume-theme';
  const button = document.getElementById('themeToggle');
  const apply = (dark) => {
    document.documentElement.dataset.theme = dark ? 'dark' : 'light';
    button.setAttribute('aria-pressed', String(dark));
  };
  apply(localStorage.getItem(KEY) === 'dark');
  button.addEventListener('click', () => {
    const dark = button.getAttribute('aria-pressed') !== 'true';
    localStorage.setItem(KEY, dark ? 'dark' : 'light');
    apply(dark);
  });
})();

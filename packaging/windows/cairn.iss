; Cairn's Windows installer (Inno Setup 6): dist\Cairn-Setup.exe from the bundle in dist\Cairn.
;   iscc /DAppVersion=0.1.0 packaging\windows\cairn.iss
; The release workflow (.github/workflows/release.yml) runs it after packaging/cairn.spec.
;
; For one person, no administrator rights: Cairn goes in %LOCALAPPDATA%\Programs\Cairn, its
; Start menu entry in the user's own Start menu. The conversations, settings and logs live
; apart from the program, in %LOCALAPPDATA%\Cairn (platformdirs), and the API key in the
; Windows Credential Manager: uninstalling removes only what this installer put in place.
; Documentation: https://jrsoftware.org/ishelp/ ([Setup] PrivilegesRequired, {autopf},
; {autoprograms}, [Messages], [Code] CurUninstallStepChanged).

#ifndef AppVersion
  #error Pass the version: iscc /DAppVersion=0.1.0 packaging\windows\cairn.iss
#endif

[Setup]
; The identity Windows knows this program by across versions (upgrades replace it).
AppId={{F1B5F540-462A-4F1C-93B4-942AA00B1928}
AppName=Cairn
AppVersion={#AppVersion}
AppVerName=Cairn {#AppVersion}
AppPublisher=Cairn developers
AppPublisherURL=https://github.com/cairn-chat/cairn
AppSupportURL=https://github.com/cairn-chat/cairn/issues
VersionInfoVersion={#AppVersion}
VersionInfoDescription=Cairn installer
; Per user: no UAC prompt, {autopf} is %LOCALAPPDATA%\Programs, {autoprograms} the user's menu.
PrivilegesRequired=lowest
DefaultDirName={autopf}\Cairn
DisableProgramGroupPage=yes
DisableDirPage=auto
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
WizardStyle=modern
SetupIconFile=..\..\build\icons\cairn.ico
UninstallDisplayIcon={app}\Cairn.exe
UninstallDisplayName=Cairn
OutputDir=..\..\dist
OutputBaseFilename=Cairn-Setup
Compression=lzma2/max
SolidCompression=yes
; Updating while Cairn is open: ask to close it (Restart Manager), then start it again.
CloseApplications=yes
RestartApplications=yes
; The optional "cairn" command changes the user's PATH.
ChangesEnvironment=yes

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "commandline"; Description: "Let terminals run the ""cairn"" command (search and export your conversations)"; GroupDescription: "For the command line:"; Flags: unchecked

[Files]
; Cairn.exe (the window), cairn.com (the command line) and what they share.
Source: "..\..\dist\Cairn\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\Cairn"; Filename: "{app}\Cairn.exe"; Comment: "Chat with Claude"
Name: "{autodesktop}\Cairn"; Filename: "{app}\Cairn.exe"; Tasks: desktopicon

[Registry]
; Added to the user's own PATH only, and only once; removed at uninstall ([Code]).
Root: HKCU; Subkey: "Environment"; ValueType: expandsz; ValueName: "Path"; ValueData: "{olddata};{app}"; Tasks: commandline; Check: NotInPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\Cairn.exe"; Description: "{cm:LaunchProgram,Cairn}"; Flags: nowait postinstall skipifsilent

[Messages]
; The installer's last page, then the uninstaller's last words: the user's data stays.
FinishedLabel=Cairn is installed. Open it from the Start menu.%n%nYour conversations and settings are kept in your own AppData\Local\Cairn folder, apart from the program: if you uninstall Cairn one day, they stay, and installing it again brings them back.
UninstalledAll=Cairn was removed from your computer.%n%nYour conversations, settings and API key were kept: installing Cairn again brings them back. To delete them too, delete the AppData\Local\Cairn folder and remove "Cairn" from the Windows Credential Manager.

[Code]
const
  EnvironmentKey = 'Environment';

function NotInPath(Folder: string): Boolean;
var
  Paths: string;
begin
  if not RegQueryStringValue(HKEY_CURRENT_USER, EnvironmentKey, 'Path', Paths) then
    Paths := '';
  Result := Pos(';' + Uppercase(Folder) + ';', ';' + Uppercase(Paths) + ';') = 0;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  Paths: string;
begin
  if CurUninstallStep <> usPostUninstall then
    Exit;
  if not RegQueryStringValue(HKEY_CURRENT_USER, EnvironmentKey, 'Path', Paths) then
    Exit;
  Paths := ';' + Paths + ';';
  if StringChangeEx(Paths, ';' + ExpandConstant('{app}') + ';', ';', True) = 0 then
    Exit;
  Paths := Copy(Paths, 2, Length(Paths) - 2);
  RegWriteExpandStringValue(HKEY_CURRENT_USER, EnvironmentKey, 'Path', Paths);
end;
